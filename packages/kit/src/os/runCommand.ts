/**
 * Runs one command as the leader of its own process group, line by line. Cancellation and the time limit kill the
 * whole group (npm and whatever it spawned); so does the command's own exit, so a build leaves no daemon behind.
 * The group id is written to `pidFile`, so a re-run after the worker was killed can kill a build still running.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { LineAssembler } from '@graphx/kit/lineAssembler';
import { trackGroup, untrackGroup } from '@graphx/kit/os/ownedGroups';
import { delay, isGroupAlive, signalGroup } from '@graphx/kit/os/processes';

export interface RunCommandOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Absolute deadline (ms since epoch). */
  deadline: number;
  signal: AbortSignal;
  onLine: (line: string, stream: 'stdout' | 'stderr') => void;
  pidFile?: string;
}

export interface RunCommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
}

/** Kills the group recorded in `pidFile` by an earlier attempt, if it still runs. */
export async function killRecordedGroup(pidFile: string): Promise<void> {
  let pgid: number;
  try {
    pgid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  if (pgid > 0 && isGroupAlive(pgid)) {
    signalGroup(pgid, 'SIGKILL');
    for (let i = 0; i < 100 && isGroupAlive(pgid); i += 1) await delay(50);
  }
  fs.rmSync(pidFile, { force: true });
}

/** Runs the command to its end (or until cancelled or past the deadline); never rejects for a non-zero exit. */
export async function runCommand(options: RunCommandOptions): Promise<RunCommandResult> {
  if (options.pidFile) await killRecordedGroup(options.pidFile);
  const child = spawn(options.file, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pgid = child.pid;
  trackGroup(pgid);
  const closed = new Promise((resolve) => child.once('close', resolve));
  if (pgid && options.pidFile) fs.writeFileSync(options.pidFile, String(pgid));
  const result: RunCommandResult = { exitCode: null, signal: null, timedOut: false, cancelled: false };
  const killGroup = () => {
    if (pgid) signalGroup(pgid, 'SIGKILL');
  };
  for (const stream of ['stdout', 'stderr'] as const) emitLines(child[stream], (line) => options.onLine(line, stream));
  const onAbort = () => {
    result.cancelled = true;
    killGroup();
  };
  if (options.signal.aborted) onAbort();
  options.signal.addEventListener('abort', onAbort);
  const timer = setTimeout(
    () => {
      result.timedOut = true;
      killGroup();
    },
    Math.max(0, options.deadline - Date.now()),
  );
  try {
    await new Promise<void>((resolve) => {
      child.once('error', (error) => {
        options.onLine(`could not start ${options.file}: ${error.message}`, 'stderr');
        result.exitCode = 127;
        resolve();
      });
      child.once('exit', (code, signal) => {
        result.exitCode = code;
        result.signal = signal;
        // Children the command left in the background would hold the pipes open and outlive the step.
        killGroup();
        resolve();
      });
    });
    // Let the pipes deliver their last bytes (bounded: a grandchild in another group may still hold them).
    await Promise.race([closed, delay(2000)]);
    if (pgid) for (let i = 0; i < 100 && isGroupAlive(pgid); i += 1) await delay(50);
  } finally {
    untrackGroup(pgid);
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    if (options.pidFile) fs.rmSync(options.pidFile, { force: true });
  }
  return result;
}

/** Calls `onLine` with each line of `stream` as it comes (without its `\r\n` or `\n`), and the unterminated last one. */
function emitLines(stream: Readable, onLine: (line: string) => void): void {
  const lines = new LineAssembler(onLine);
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => lines.push(chunk));
  stream.on('end', () => lines.end());
}
