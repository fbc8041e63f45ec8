/**
 * What a runtime process loaded, as the `loadedPackages.js` preload records it: the environment to start the runtime
 * with, the names recorded for one process, and the clean-up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface LoadedModulesRecord {
  /** NODE_OPTIONS (the preload after `nodeOptions`) and the record file's variable. */
  env(nodeOptions?: string): Record<string, string>;
  /** npm packages and watched built-ins (`node:<name>`) the process `pid` has loaded so far. */
  loadedBy(pid: number): string[];
  remove(): void;
}

export function recordLoadedModules(): LoadedModulesRecord {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-loaded-')), 'packages.txt');
  fs.writeFileSync(file, '');
  return {
    env: (nodeOptions = '') => ({
      NODE_OPTIONS: `${nodeOptions} --require ${path.join(__dirname, 'loadedPackages.js')}`.trim(),
      GRAPHX_TEST_LOADED_PACKAGES: file,
    }),
    loadedBy: (pid) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${pid} `))
        .map((line) => line.split(' ')[1]!),
    remove: () => fs.rmSync(path.dirname(file), { recursive: true, force: true }),
  };
}
