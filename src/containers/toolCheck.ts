/**
 * The container runner's check of this machine's tools, so a missing one is a sentence naming it and the two ways on
 * (install the tools, or run apps as processes) instead of a raw `spawn mmdebstrap ENOENT` halfway through start-up.
 * With GRAPHX_RUNNER=auto the runner choice (src/targets/choose.ts) falls back to the process runner with this
 * sentence as a warning; with `container` it stops start-up with it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '@graphx/kit/errors';

/** The container runner cannot work on this machine as configured; the message names what is missing. */
export class ContainerToolsMissing extends ConfigError {
  override name = 'ContainerToolsMissing';
  constructor(
    readonly missing: string[],
    why: string,
  ) {
    super(
      `The container runner needs ${missing.join(', ')} ${why}, and ${missing.length > 1 ? 'they are' : 'it is'} not ` +
        'installed: run `bash scripts/install-container-tools.sh` to install the container tools, or set ' +
        'GRAPHX_RUNNER=process to run apps as host processes (not isolated).',
    );
  }
}

/** The absolute path of an executable named `name` on PATH, or null. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? '/usr/bin:/bin'): string | null {
  for (const dir of searchPath.split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}
