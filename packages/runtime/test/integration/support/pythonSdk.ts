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

/** One step of making the environment: what runs, and what its failure is called. */
interface Step {
  file: string;
  args: string[];
  timeout: number;
  failure: string;
}

const PROBE: Step = { file: pythonSdkInterpreter, args: ['-c', 'import langgraph_sdk'], timeout: 120_000, failure: '' };
const STEPS: Step[] = [
  { file: 'python3', args: ['-m', 'venv', venvDir], timeout: 120_000, failure: 'python3 -m venv failed' },
  {
    file: pythonSdkInterpreter,
    args: ['-m', 'pip', 'install', '-q', 'langgraph-sdk'],
    timeout: 300_000,
    failure: 'pip could not install langgraph-sdk',
  },
];

/** The steps in order, each yielded to a driver that answers with its stderr on failure, else null. */
function* environmentSteps(): Generator<Step, string | null, string | null> {
  if (fs.existsSync(pythonSdkInterpreter) && (yield PROBE) === null) return null;
  for (const step of STEPS) {
    const stderr = yield step;
    if (stderr !== null) return `${step.failure}: ${stderr.slice(-500)}`;
  }
  return (yield PROBE) === null ? null : 'langgraph_sdk does not import after the install';
}

/**
 * Makes the client's virtualenv unless it is there; resolves with why it could not (the caller skips, saying so), or
 * null. Never blocks the event loop: a test may serve HTTP from its own process (the pipeline stack), and a blocked
 * loop lets the server's keep-alive timeout close a pooled connection just as the client reuses it (ECONNRESET).
 */
export async function ensurePythonClient(): Promise<string | null> {
  const steps = environmentSteps();
  let next = steps.next();
  while (!next.done) {
    const step = next.value;
    const stderr = await new Promise<string | null>((resolve) => {
      execFile(step.file, step.args, { timeout: step.timeout, encoding: 'utf8' }, (error, _stdout, output) =>
        resolve(error ? output || error.message : null),
      );
    });
    next = steps.next(stderr);
  }
  return next.value;
}

/** The same, blocking: for a describe block that decides at collection time whether its tests run (no server here). */
export function ensurePythonClientNow(): string | null {
  const steps = environmentSteps();
  let next = steps.next();
  while (!next.done) {
    const result = spawnSync(next.value.file, next.value.args, { encoding: 'utf8', timeout: next.value.timeout });
    next = steps.next(result.status === 0 ? null : result.stderr || String(result.error ?? 'failed'));
  }
  return next.value;
}
