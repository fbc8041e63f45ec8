/**
 * The Python `langgraph-sdk` client for tests: from PyPI, in a virtualenv cached under .test-data/ (shared by every
 * test that drives a server with it).
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(__dirname, '..', '..', '..', '..', '..');
const venvDir = path.join(projectRoot, '.test-data', 'python-sdk-venv');

/** The interpreter that has `langgraph_sdk`. */
export const pythonSdkInterpreter = path.join(venvDir, 'bin', 'python');

/**
 * Makes the client's virtualenv unless it is there; resolves with why it could not (the caller skips, saying so), or
 * null. Never blocks the event loop: a test may serve HTTP from its own process (the pipeline stack), and a blocked
 * loop lets the server's keep-alive timeout close a pooled connection just as the client reuses it (ECONNRESET).
 */
export async function ensurePythonClient(): Promise<string | null> {
  const run = (args: string[], file = pythonSdkInterpreter, timeout = 120_000) =>
    new Promise<boolean>((resolve) => {
      execFile(file, args, { timeout }, (error) => resolve(!error));
    });
  if (fs.existsSync(pythonSdkInterpreter) && (await run(['-c', 'import langgraph_sdk']))) return null;
  // The blocking form below says what failed; here it is only needed when the environment is missing.
  return ensurePythonClientNow();
}

/** The same, blocking: for a describe block that decides at collection time whether its tests run (no server here). */
export function ensurePythonClientNow(): string | null {
  const python = pythonSdkInterpreter;
  const probe = () => spawnSync(python, ['-c', 'import langgraph_sdk'], { encoding: 'utf8' }).status === 0;
  if (fs.existsSync(python) && probe()) return null;
  const created = spawnSync('python3', ['-m', 'venv', venvDir], { encoding: 'utf8' });
  if (created.status !== 0) return `python3 -m venv failed: ${created.stderr}`;
  const installed = spawnSync(python, ['-m', 'pip', 'install', '-q', 'langgraph-sdk'], { encoding: 'utf8', timeout: 300_000 });
  if (installed.status !== 0 || !probe()) return `pip could not install langgraph-sdk: ${installed.stderr.slice(-500)}`;
  return null;
}
