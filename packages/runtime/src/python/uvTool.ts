/**
 * The one way uv is installed, for the host builder's BUILD step and for `graphx dev`: its wheel, pinned by version and
 * hash (python/uv-requirements.txt), in a tool environment of its own under a tools folder, made once per base
 * interpreter and uv pin and shared by every app environment made beside it. No tenant's setting reaches its install
 * (pip with `--require-hashes` refuses any other wheel), and an app's environment holds only the app's packages.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildIntoCache } from './pythonRequirements';
import { UV_REQUIREMENTS } from './uvProject';

/** One command of the install; the host builder runs it as a step of the build (its log, deadline, cancellation). */
export interface ToolCommand {
  /** What a build log shows (`$ <display>`). */
  display: string;
  file: string;
  args: string[];
  /** Variables added to the caller's environment for this command. */
  env?: Record<string, string>;
}

/** pip's settings for unattended installs (no prompt, no version check, no progress bar), for every host install. */
export const PIP_ENV = { PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', PIP_PROGRESS_BAR: 'off' };

/** The tools folder beside an environments folder (`python-envs` → `python-tools`), where uv's environment lives. */
export const toolsDirBeside = (envsDir: string): string => path.join(path.dirname(envsDir), 'python-tools');

/**
 * uv from its pinned wheel in `<toolsDir>/uv-<digest of basePython and the pin>`, made with `basePython` when missing
 * (built beside it and renamed into place, as environments are). @returns the path of the uv executable.
 * @param run runs each command of the install: a build step (host builder), a child process (`graphx dev`).
 */
export async function ensureUvTool(
  toolsDir: string,
  basePython: string,
  run: (command: ToolCommand) => Promise<void>,
): Promise<string> {
  const pin = crypto.createHash('sha256').update(basePython).update(fs.readFileSync(UV_REQUIREMENTS)).digest('hex').slice(0, 16);
  const { directory } = await buildIntoCache(toolsDir, `uv-${pin}`, async (building) => {
    await run({ display: `${basePython} -m venv <uv ${pin}>`, file: basePython, args: ['-m', 'venv', building] });
    const args = ['install', '--require-hashes', '--no-deps', '-r', UV_REQUIREMENTS];
    await run({
      display: `pip ${args.join(' ')}`,
      file: path.join(building, 'bin', 'python'),
      args: ['-m', 'pip', ...args],
      env: PIP_ENV,
    });
  });
  return path.join(directory, 'bin', 'uv');
}
