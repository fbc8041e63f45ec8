/**
 * What the runtime cannot serve without, gone: the process must stop and exit so that whatever runs it (a runner, the
 * worker supervisor) starts a replacement.
 */
import os from 'node:os';

/** Why a runtime can no longer serve, and the exit code that says so (128 + signal, as a shell reports a kill). */
export interface RuntimeLoss {
  reason: string;
  exitCode: number;
}

/** What the executor's end means for the instance, in the words its app log shows. */
export function executorLoss(code: number | null, signal: NodeJS.Signals | null, killedFor: string | null = null): RuntimeLoss {
  const exitCode = signal ? 128 + (os.constants.signals[signal] ?? 0) : code || 1;
  const what = killedFor
    ? `the runtime killed its Python executor: ${killedFor}`
    : signal
      ? `the Python executor was killed (${signal})${signal === 'SIGKILL' ? ': out of memory, unless someone killed it' : ''}`
      : `the Python executor exited (code ${code})`;
  return { reason: `${what}; the runtime stops so that the instance is replaced`, exitCode };
}
