/**
 * The virtual environment of an app's Python graphs: the executor's pinned packages (python/requirements.txt) and the
 * app's `dependencies`, installed with the executor's pins as constraints so no requirement of the app replaces a
 * package the executor relies on. Environments are cached under `<envsDir>/<digest>`, the digest covering the Python
 * line, the pins, the requirement strings and the manifests of local folders; a new one is built in a temporary
 * folder and renamed into place, so concurrent starts never see half an environment.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '@graphx/kit/errors';
import type { PythonConfig } from '@graphx/contract/graphxConfig';
import { EXECUTOR_PYTHONPATH } from './executor';

const run = promisify(execFile);

export const EXECUTOR_REQUIREMENTS = path.join(EXECUTOR_PYTHONPATH, 'requirements.txt');

// Elastic-licensed server packages (never installed for a hosted service) and the executor's own name.
const REFUSED_REQUIREMENT = /^(langgraph-api|langgraph-runtime[\w.-]*|graphx[-_]executor)\b/i;
const LOCAL_MANIFESTS = ['pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'];

/** A local folder of `dependencies` (`.`, `./pkg`), as opposed to a requirement string for the package index. */
function isLocal(dependency: string): boolean {
  return dependency === '.' || dependency.startsWith('./') || dependency.startsWith('../') || dependency.startsWith('/');
}

/**
 * Checks `dependencies`: a refused package or a local folder outside the app fails naming the key.
 * @throws ConfigError
 */
export function checkPythonDependencies(dependencies: string[], appDir: string): void {
  for (const dependency of dependencies) {
    if (REFUSED_REQUIREMENT.test(dependency.trim())) {
      throw new ConfigError(`graphx.json "dependencies": "${dependency}" is reserved: the server's own packages are provided.`);
    }
    if (isLocal(dependency)) {
      const folder = path.resolve(appDir, dependency);
      if (folder !== appDir && !folder.startsWith(appDir + path.sep)) {
        throw new ConfigError(`graphx.json "dependencies": "${dependency}" is outside the application's folder.`);
      }
      if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
        throw new ConfigError(`graphx.json "dependencies": "${dependency}" is not a folder.`);
      }
    }
  }
}

/** The interpreter of Python `version` (`3.12`): `python3.12` on PATH, Debian's, or a pyenv build. */
export async function findPython(version: string): Promise<string> {
  const pyenvRoot = process.env.PYENV_ROOT ?? path.join(process.env.HOME ?? '/root', '.pyenv');
  const pyenvBuilds = fs.existsSync(path.join(pyenvRoot, 'versions'))
    ? fs
        .readdirSync(path.join(pyenvRoot, 'versions'))
        .filter((name) => name === version || name.startsWith(`${version}.`))
        .map((name) => path.join(pyenvRoot, 'versions', name, 'bin', `python${version}`))
    : [];
  const candidates = [process.env.GRAPHX_PYTHON_BASE, `python${version}`, `/usr/bin/python${version}`, ...pyenvBuilds];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      const { stdout } = await run(candidate, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { timeout: 10_000 });
      if (stdout.trim() === version) return candidate;
    } catch {
      // Not this one.
    }
  }
  throw new ConfigError(`graphx.json "python_version" ${version}: no Python ${version} interpreter is installed here.`);
}

function digestOf(config: PythonConfig, appDir: string): string {
  const hash = crypto.createHash('sha256');
  hash.update(`python ${config.version}\n`).update(fs.readFileSync(EXECUTOR_REQUIREMENTS));
  for (const dependency of config.dependencies) {
    hash.update(`\ndependency ${dependency}\n`);
    if (!isLocal(dependency)) continue;
    for (const manifest of LOCAL_MANIFESTS) {
      const file = path.join(appDir, dependency, manifest);
      if (fs.existsSync(file)) hash.update(`${manifest}\n`).update(fs.readFileSync(file));
    }
  }
  if (config.pipConfigFile) hash.update('\npip.conf\n').update(fs.readFileSync(path.resolve(appDir, config.pipConfigFile)));
  return hash.digest('hex').slice(0, 24);
}

/** pip's arguments for the app's `dependencies` (a folder's requirements.txt first; plain folders via a .pth file). */
function installArguments(config: PythonConfig, appDir: string): { args: string[]; importable: string[] } {
  const args: string[] = [];
  const importable: string[] = [];
  for (const dependency of config.dependencies) {
    if (!isLocal(dependency)) {
      args.push(dependency);
      continue;
    }
    const folder = path.resolve(appDir, dependency);
    if (fs.existsSync(path.join(folder, 'requirements.txt'))) args.push('-r', path.join(folder, 'requirements.txt'));
    if (fs.existsSync(path.join(folder, 'pyproject.toml')) || fs.existsSync(path.join(folder, 'setup.py'))) {
      args.push('-e', folder);
    } else {
      importable.push(folder);
    }
  }
  return { args, importable };
}

/**
 * The Python of the app's environment, building it when the cache has none.
 * @param onLog hears pip's output (a build log, a developer's terminal).
 * @throws ConfigError when the install fails (pip's last lines in the message).
 */
export async function ensurePythonEnv(options: {
  envsDir: string;
  config: PythonConfig;
  appDir: string;
  onLog?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const { config, appDir } = options;
  checkPythonDependencies(config.dependencies, appDir);
  const target = path.join(options.envsDir, digestOf(config, appDir));
  const python = path.join(target, 'bin', 'python');
  if (fs.existsSync(path.join(target, '.complete'))) return python;
  fs.mkdirSync(options.envsDir, { recursive: true });
  const building = `${target}.tmp-${crypto.randomBytes(4).toString('hex')}`;
  try {
    await run(await findPython(config.version), ['-m', 'venv', building], { timeout: 120_000 });
    const { args, importable } = installArguments(config, appDir);
    const pipEnv: NodeJS.ProcessEnv = { ...(options.env ?? process.env), PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };
    if (config.pipConfigFile) pipEnv.PIP_CONFIG_FILE = path.resolve(appDir, config.pipConfigFile);
    const pipArgs = ['-m', 'pip', 'install', '-q', '-r', EXECUTOR_REQUIREMENTS, '-c', EXECUTOR_REQUIREMENTS, ...args];
    const { stdout, stderr } = await run(path.join(building, 'bin', 'python'), pipArgs, {
      cwd: appDir,
      env: pipEnv,
      timeout: 15 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stderr?: string; message: string }) => {
      const tail = (error.stderr ?? error.message).trim().split('\n').slice(-8).join('\n');
      throw new ConfigError(`graphx.json "dependencies" could not be installed:\n${tail}`);
    });
    for (const line of `${stdout}${stderr}`.split('\n')) if (line.trim()) options.onLog?.(line);
    if (importable.length > 0) {
      const { stdout: sitePackages } = await run(path.join(building, 'bin', 'python'), [
        '-c',
        'import sysconfig; print(sysconfig.get_paths()["purelib"])',
      ]);
      fs.writeFileSync(path.join(sitePackages.trim(), 'graphx_app_folders.pth'), `${importable.join('\n')}\n`);
    }
    fs.writeFileSync(path.join(building, '.complete'), new Date().toISOString());
    try {
      fs.renameSync(building, target);
    } catch (error) {
      // Another start built the same environment first: use that one.
      if (!fs.existsSync(path.join(target, '.complete'))) throw error;
      fs.rmSync(building, { recursive: true, force: true });
    }
    return python;
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    throw error;
  }
}
