/**
 * uv in an app's Python environment: graphx.json `"source": {"kind": "uv", "root", "package"}` (a uv project or
 * workspace whose uv.lock decides what is installed) and `"pip_installer": "uv"`. uv itself comes from the package
 * index, pinned by version and hash (python/uv-requirements.txt). The install is python/uv_project.py, run by both
 * runners' BUILD steps; what is shared here is the check of `source.root`, the inputs of the environment's digest and
 * the folders of the workspace members, which the running revision puts in front of site-packages.
 */
import type crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '@graphx/kit/errors';
import type { PythonConfig, UvSource } from '@graphx/contract/pythonConfig';
import { EXECUTOR_PYTHONPATH } from './executor';

/** uv's pin: one version, the hashes of its Linux wheels. */
export const UV_REQUIREMENTS = path.join(EXECUTOR_PYTHONPATH, 'uv-requirements.txt');
/** Exports the lock (`--locked`), checks it against the server's pins, installs it. */
export const UV_PROJECT_HELPER = path.join(EXECUTOR_PYTHONPATH, 'uv_project.py');
/** Written by the helper in the environment: the workspace members' folders, relative to the project root. */
const MEMBERS_FILE = 'graphx-uv-members.json';

/** uv's settings in every build: never download an interpreter, no progress bars in the build log. */
export const UV_BUILD_ENV: Record<string, string> = { UV_PYTHON_DOWNLOADS: 'never', UV_NO_PROGRESS: '1' };
/** On the host: its certificate store too (where a TLS-intercepting proxy's CA is), as pip and npm use it. */
export const UV_HOST_ENV: Record<string, string> = { ...UV_BUILD_ENV, UV_SYSTEM_CERTS: '1' };

/** True when the environment needs uv: a uv project, or `"pip_installer": "uv"`. */
export function usesUv(python: PythonConfig): boolean {
  return python.source !== null || python.installer === 'uv';
}

/**
 * The uv project's root: `source.root` from graphx.json's directory, inside the repository, holding pyproject.toml and
 * uv.lock. @throws ConfigError naming the key.
 */
export function uvProjectRoot(source: UvSource, appDir: string, repoDir: string): string {
  const root = path.resolve(appDir, source.root);
  // Through links: a `root` that is a link out of the clone is outside it.
  const real = (file: string) => (fs.existsSync(file) ? fs.realpathSync(file) : file);
  const inside = path.relative(real(repoDir), real(root));
  if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) {
    throw new ConfigError(`graphx.json "source.root" "${source.root}" is outside the repository.`);
  }
  for (const file of ['pyproject.toml', 'uv.lock']) {
    if (!fs.existsSync(path.join(root, file))) {
      const where = path.relative(repoDir, path.join(root, file));
      throw new ConfigError(
        `graphx.json "source": no ${file} at "source.root" "${source.root}" (${where} in the repository); run \`uv lock\` there and commit uv.lock.`,
      );
    }
  }
  return root;
}

/** Adds what keys a uv environment to an environment's digest: uv's pin and, for a uv project, its lock and member. */
export function hashUvInputs(hash: crypto.Hash, python: PythonConfig, appDir: string): void {
  if (!usesUv(python)) return;
  hash.update('\nuv\n').update(fs.readFileSync(UV_REQUIREMENTS));
  if (!python.source) return;
  const root = path.resolve(appDir, python.source.root);
  // An inferred member depends on where graphx.json is in the workspace.
  const member = python.source.package ?? `inferred from ${path.relative(root, appDir) || '.'}`;
  hash.update(`\nuv.lock of ${member}\n`).update(fs.readFileSync(path.join(root, 'uv.lock')));
}

/** The helper's arguments (after the script), the project root and graphx.json's directory as the caller sees them. */
export function uvProjectArguments(options: {
  uv: string;
  root: string;
  configDir: string;
  pins: string;
  source: UvSource;
  checkOnly?: boolean;
}): string[] {
  const { source } = options;
  return [
    ...['--uv', options.uv, '--root', options.root, '--config-dir', options.configDir, '--pins', options.pins],
    ...(source.package ? ['--package', source.package] : []),
    ...(options.checkOnly ? ['--check-only'] : []),
  ];
}

/**
 * The folders a uv project's environment leaves to the path: each workspace member the deployed package needs (as
 * the helper recorded them in the environment of `python`), its `src/` first; the running revision's own code.
 */
export function uvImportRoots(source: UvSource, appDir: string, python: string): string[] {
  const file = path.join(path.dirname(path.dirname(python)), MEMBERS_FILE);
  if (!fs.existsSync(file)) return [];
  const root = path.resolve(appDir, source.root);
  const roots: string[] = [];
  for (const member of JSON.parse(fs.readFileSync(file, 'utf8')) as string[]) {
    const folder = path.resolve(root, member);
    if (folder !== root && !folder.startsWith(root + path.sep)) continue;
    if (fs.existsSync(path.join(folder, 'src'))) roots.push(path.join(folder, 'src'));
    roots.push(folder);
  }
  return roots;
}
