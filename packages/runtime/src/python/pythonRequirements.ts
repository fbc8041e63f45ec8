/**
 * What an app's Python environment holds, shared by `graphx dev` (pythonEnv.ts, built at start) and the builders
 * (built by the BUILD step, then handed to the runtime as GRAPHX_PYTHON): the checks of graphx.json `dependencies`,
 * the digest that keys a cached environment, pip's arguments, the folders a built environment leaves to the path,
 * and the interpreters a Python line can come from.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '@graphx/kit/errors';
import { OFFERED_PYTHON_VERSIONS, type PythonConfig } from '@graphx/contract/pythonConfig';
import { EXECUTOR_PYTHONPATH } from './executor';
import { hashUvInputs, uvImportRoots } from './uvProject';

const run = promisify(execFile);

export const EXECUTOR_REQUIREMENTS = path.join(EXECUTOR_PYTHONPATH, 'requirements.txt');

// Elastic-licensed server packages (never installed for a hosted service) and the executor's own name.
const REFUSED_REQUIREMENT = /^(langgraph-api|langgraph-runtime[\w.-]*|graphx[-_]executor)\b/i;
const LOCAL_MANIFESTS = ['pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'];

/** A local folder of `dependencies` (`.`, `./pkg`), as opposed to a requirement string for the package index. */
export function isLocalDependency(dependency: string): boolean {
  return dependency === '.' || dependency.startsWith('./') || dependency.startsWith('../') || dependency.startsWith('/');
}

/** PEP 503's normalised name (`Langgraph_SDK` and `langgraph.sdk` are `langgraph-sdk`). */
const normalise = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** The executor's pins (python/requirements.txt) by normalised name. */
export function serverPins(): Map<string, string> {
  const pins = new Map<string, string>();
  for (const line of fs.readFileSync(EXECUTOR_REQUIREMENTS, 'utf8').split('\n')) {
    const match = /^([A-Za-z0-9][\w.-]*)==(\S+)/.exec(line.trim());
    if (match) pins.set(normalise(match[1] as string), match[2] as string);
  }
  return pins;
}

function compareReleases(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** True when release `version` satisfies one PEP 440 clause (`>=1.0`, `==1.2.*`, `~=1.2`); false when unreadable. */
function satisfies(version: string, clause: string): boolean {
  const match = /^(===|==|!=|~=|>=|<=|>|<)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?$/.exec(clause.trim());
  if (!match) return false;
  const [, operator, wanted, wildcard] = match as unknown as [string, string, string, string | undefined];
  const order = compareReleases(version, wanted);
  const prefix = version === wanted || version.startsWith(`${wanted}.`);
  switch (operator) {
    case '==':
    case '===':
      return wildcard ? prefix : order === 0;
    case '!=':
      return wildcard ? !prefix : order !== 0;
    case '>=':
      return order >= 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '<':
      return order < 0;
    default: {
      // ~=X.Y(.Z): at least X.Y(.Z), same release up to the last segment but one.
      const kept = wanted.split('.').slice(0, -1).join('.');
      return order >= 0 && (version === kept || version.startsWith(`${kept}.`));
    }
  }
}

/**
 * Refuses a requirement string that would replace a package the server relies on: one naming a pinned package (any
 * spelling) with a version the pin does not satisfy, a URL or extras-free marker trick, or an Elastic-licensed server.
 * @returns the reason, or null when the requirement is acceptable.
 */
export function reservedRequirement(requirement: string, pins: Map<string, string> = serverPins()): string | null {
  const text = requirement.trim();
  if (REFUSED_REQUIREMENT.test(text)) return 'the server’s own packages are provided';
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$/.exec(text);
  if (!match) return null;
  const pinned = pins.get(normalise(match[1] as string));
  if (!pinned) return null;
  const rest = (match[3] as string).split(';')[0]!.trim();
  const clauses = rest
    .replace(/^\((.*)\)$/, '$1')
    .split(',')
    .filter((clause) => clause.trim() !== '');
  if (!rest.startsWith('@') && clauses.every((clause) => satisfies(pinned, clause))) return null;
  return `the server relies on ${normalise(match[1] as string)} ${pinned}, which it may not replace`;
}

/**
 * Checks `dependencies`: a reserved package or a local folder outside the app fails naming the key.
 * @throws ConfigError
 */
export function checkPythonDependencies(dependencies: string[], appDir: string): void {
  const pins = serverPins();
  for (const dependency of dependencies) {
    if (isLocalDependency(dependency)) {
      const folder = path.resolve(appDir, dependency);
      if (folder !== appDir && !folder.startsWith(appDir + path.sep)) {
        throw new ConfigError(`graphx.json "dependencies": "${dependency}" is outside the application's folder.`);
      }
      if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
        throw new ConfigError(`graphx.json "dependencies": "${dependency}" is not a folder.`);
      }
      continue;
    }
    if (dependency.trim().startsWith('-')) {
      // A pip option would change how everything installs (another index, no constraints): it belongs in pip_config_file.
      throw new ConfigError(
        `graphx.json "dependencies": "${dependency}" is a pip option, not a requirement; use "pip_config_file".`,
      );
    }
    const reserved = reservedRequirement(dependency, pins);
    if (reserved) throw new ConfigError(`graphx.json "dependencies": "${dependency}" is reserved: ${reserved}.`);
  }
}

/** The Python line an interpreter runs (`3.12`), or null when it does not run. */
async function lineOf(interpreter: string): Promise<string | null> {
  try {
    const { stdout } = await run(interpreter, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { timeout: 10_000 });
    return stdout.trim();
  } catch {
    return null;
  }
}

/** Where an interpreter of `version` may be: GRAPHX_PYTHON_BASE, `python3.12` on PATH, Debian's, pyenv's builds. */
function candidatesFor(version: string): string[] {
  const pyenvRoot = process.env.PYENV_ROOT ?? path.join(process.env.HOME ?? '/root', '.pyenv');
  const pyenvBuilds = fs.existsSync(path.join(pyenvRoot, 'versions'))
    ? fs
        .readdirSync(path.join(pyenvRoot, 'versions'))
        .filter((name) => name === version || name.startsWith(`${version}.`))
        .map((name) => path.join(pyenvRoot, 'versions', name, 'bin', `python${version}`))
    : [];
  const base = process.env.GRAPHX_PYTHON_BASE;
  return [...(base ? [base] : []), `python${version}`, `/usr/bin/python${version}`, ...pyenvBuilds];
}

/**
 * The interpreter of Python `version` (`3.12`). `interpreters` limits the search to those (an operator's list);
 * otherwise PATH, Debian's and pyenv's are looked at.
 * @throws ConfigError naming `python_version` and the lines that are available.
 */
export async function findPython(version: string, interpreters?: string[]): Promise<string> {
  for (const candidate of interpreters ?? candidatesFor(version)) {
    if ((await lineOf(candidate)) === version) return candidate;
  }
  const available: string[] = [];
  for (const line of OFFERED_PYTHON_VERSIONS) {
    for (const candidate of interpreters ?? candidatesFor(line)) {
      if ((await lineOf(candidate)) === line) {
        available.push(line);
        break;
      }
    }
  }
  throw new ConfigError(
    `graphx.json "python_version" ${version} cannot be provided here: available ${available.length > 0 ? available.join(', ') : 'none'}.`,
  );
}

/**
 * The digest that keys a cached environment: the Python line, the executor's pins, the requirement strings, the
 * manifests of local folders and the pip configuration; `salt` keeps apart what must not be shared (a tenant's).
 */
export function pythonEnvDigest(config: PythonConfig, appDir: string, salt = ''): string {
  const hash = crypto.createHash('sha256');
  if (salt) hash.update(`salt ${salt}\n`);
  hash.update(`python ${config.version}\n`).update(fs.readFileSync(EXECUTOR_REQUIREMENTS));
  for (const dependency of config.dependencies) {
    hash.update(`\ndependency ${dependency}\n`);
    if (!isLocalDependency(dependency)) continue;
    for (const manifest of LOCAL_MANIFESTS) {
      const file = path.join(appDir, dependency, manifest);
      if (fs.existsSync(file)) hash.update(`${manifest}\n`).update(fs.readFileSync(file));
    }
  }
  if (config.pipConfigFile) hash.update('\npip.conf\n').update(fs.readFileSync(path.resolve(appDir, config.pipConfigFile)));
  hashUvInputs(hash, config, appDir);
  return hash.digest('hex').slice(0, 24);
}

/** The marker a finished environment carries; a directory without it was never completed. */
export const COMPLETE_MARKER = '.complete';

/**
 * The cached environment `<envsDir>/<digest>`: when it is complete, `{ built: false }` at once; otherwise `build` fills
 * a temporary directory beside it, which is then renamed into place, so neither a build that dies nor concurrent
 * builds of the same digest ever leave half an environment to be reused (the loser of a race uses the winner's).
 * @returns the environment's directory and whether this call built it.
 */
export async function buildIntoCache(
  envsDir: string,
  digest: string,
  build: (directory: string) => Promise<void>,
): Promise<{ directory: string; built: boolean }> {
  const directory = path.join(envsDir, digest);
  const marker = path.join(directory, COMPLETE_MARKER);
  if (fs.existsSync(marker)) {
    // The marker's time is the environment's last use: pruning (the host builder's) spares what was used lately.
    try {
      const now = new Date();
      fs.utimesSync(marker, now, now);
    } catch {
      // A read-only environment is used as it is; nothing prunes it.
    }
    return { directory, built: false };
  }
  fs.mkdirSync(envsDir, { recursive: true });
  const building = `${directory}.tmp-${crypto.randomBytes(4).toString('hex')}`;
  try {
    await build(building);
    fs.writeFileSync(path.join(building, COMPLETE_MARKER), new Date().toISOString());
    try {
      fs.renameSync(building, directory);
    } catch (error) {
      if (!fs.existsSync(path.join(directory, COMPLETE_MARKER))) throw error;
      fs.rmSync(building, { recursive: true, force: true });
    }
    return { directory, built: true };
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    throw error;
  }
}

/**
 * pip's arguments for the executor's pins and the app's `dependencies`: the pins as constraints, a folder's
 * requirements.txt first, a package folder editable (`graphx dev`) or as a copy (a build), a plain folder left to the
 * path (`importable`).
 */
export function pipInstallArguments(
  config: PythonConfig,
  appDir: string,
  options: { editable: boolean },
): { args: string[]; importable: string[] } {
  const args = ['install', '-r', EXECUTOR_REQUIREMENTS, '-c', EXECUTOR_REQUIREMENTS];
  const importable: string[] = [];
  for (const dependency of config.dependencies) {
    if (!isLocalDependency(dependency)) {
      args.push(dependency);
      continue;
    }
    const folder = path.resolve(appDir, dependency);
    if (fs.existsSync(path.join(folder, 'requirements.txt'))) args.push('-r', path.join(folder, 'requirements.txt'));
    if (fs.existsSync(path.join(folder, 'pyproject.toml')) || fs.existsSync(path.join(folder, 'setup.py'))) {
      args.push(...(options.editable ? ['-e', folder] : [folder]));
    } else {
      importable.push(folder);
    }
  }
  return { args, importable };
}

/**
 * The folders a built environment leaves to the path, in front of its site-packages: each local folder of
 * `dependencies` and its `src/` (the src layout), or a uv project's workspace members. A cached environment holds a
 * copy of the local packages of the build that made it; these put the running revision's own code first.
 */
export function pythonImportRoots(config: PythonConfig, appDir: string, python: string): string[] {
  if (config.source) return uvImportRoots(config.source, appDir, python);
  const roots: string[] = [];
  for (const dependency of config.dependencies) {
    if (!isLocalDependency(dependency)) continue;
    const folder = path.resolve(appDir, dependency);
    if (fs.existsSync(path.join(folder, 'src'))) roots.push(path.join(folder, 'src'));
    roots.push(folder);
  }
  return roots;
}
