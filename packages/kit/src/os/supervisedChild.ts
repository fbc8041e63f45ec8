/**
 * A long-running helper process of the stack (embedded PostgreSQL, the Temporal dev server) started in its own
 * session (`detached`), so a terminal's Ctrl-C reaches only `graphx start`, which stops it last, in order. When it
 * dies on its own it is started again and the restart is logged; `stop()` ends it for good.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import { logger } from '../logger';

export interface SupervisedChildOptions {
  /** Shown in logs: "PostgreSQL", "the Temporal dev server". */
  name: string;
  command: string;
  args: string[];
  /** stdio and detached are set here: output goes to `logFile` (opened anew at each start), else nowhere. */
  spawnOptions: Omit<SpawnOptions, 'stdio' | 'detached'>;
  logFile?: string;
  /** Output to this process's stdout and stderr instead of a file (a worker's JSON log lines). */
  inheritOutput?: boolean;
  /** Called with the pid of each process started (the first and every restart): the stack records it. */
  onLaunch?: (pid: number | undefined) => void;
  /** Resolves once the freshly started process serves; rejects (or throws) if it never does. */
  waitReady: (child: ChildProcess, exited: () => boolean) => Promise<void>;
  /** Signal of a clean, quick stop (PostgreSQL: SIGINT, its "fast" shutdown). */
  stopSignal: NodeJS.Signals;
  /** Restart the process when it dies on its own (default true). */
  supervise?: boolean;
}

export interface SupervisedChild {
  /** Pid of the current process (it leads its own process group). */
  pid: () => number | undefined;
  /** How many times it was restarted after dying on its own. */
  restarts: () => number;
  /** Stops it: `stopSignal` to its group, SIGKILL after `graceMs`. No restart follows. */
  stop: (graceMs?: number) => Promise<void>;
  /** SIGKILL to its group at once (a second Ctrl-C). */
  kill: () => void;
}

/** After this many restarts within RESTART_WINDOW_MS, supervision gives up (logged) instead of looping. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

/** Starts the process, waits until it is ready, and supervises it. */
export async function startSupervisedChild(options: SupervisedChildOptions): Promise<SupervisedChild> {
  let child: ChildProcess;
  let exited = false;
  let exitPromise: Promise<void> = Promise.resolve();
  let stopping = false;
  let restartCount = 0;
  const recentRestarts: number[] = [];

  const launch = async (): Promise<void> => {
    exited = false;
    const log = options.inheritOutput ? 'inherit' : options.logFile ? fs.openSync(options.logFile, 'a') : 'ignore';
    try {
      child = spawn(options.command, options.args, { ...options.spawnOptions, stdio: ['ignore', log, log], detached: true });
    } finally {
      if (typeof log === 'number') fs.closeSync(log);
    }
    child.on('error', () => {});
    options.onLaunch?.(child.pid);
    const current = child;
    let ready = false;
    exitPromise = new Promise<void>((resolve) =>
      current.once('exit', (code, signal) => {
        exited = true;
        resolve();
        // Only a server that had come up is restarted here; a failed start is retried by restart() itself.
        if (ready && !stopping && options.supervise !== false) void restart(code, signal);
      }),
    );
    try {
      // A process that exits during start-up fails the start at once, not after the readiness timeout.
      const exitedEarly = exitPromise.then(() => {
        if (ready) return;
        const tail = options.logFile ? fs.readFileSync(options.logFile, 'utf8').slice(-1500) : '';
        throw new Error(`${options.name} exited during start-up${tail ? `; last lines of ${options.logFile}:\n${tail}` : ''}`);
      });
      await Promise.race([options.waitReady(current, () => exited), exitedEarly]);
      ready = true;
    } catch (error) {
      killGroup(current.pid, 'SIGKILL');
      throw error;
    }
  };

  const restart = async (code: number | null, signal: NodeJS.Signals | null): Promise<void> => {
    const now = Date.now();
    while (recentRestarts.length > 0 && recentRestarts[0]! < now - RESTART_WINDOW_MS) recentRestarts.shift();
    if (recentRestarts.length >= MAX_RESTARTS) {
      logger.error({ component: options.name }, `${options.name} keeps dying; not restarting it again (restart graphx)`);
      return;
    }
    recentRestarts.push(now);
    logger.error({ component: options.name, code, signal }, `${options.name} exited unexpectedly; restarting it`);
    // A killed server's children may still hold its port or shared memory for a moment: retry a few times.
    for (let attempt = 1; attempt <= 10 && !stopping; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      if (stopping) return;
      try {
        await launch();
        restartCount += 1;
        logger.warn({ component: options.name, pid: child.pid }, `${options.name} restarted`);
        return;
      } catch (error) {
        logger.warn({ component: options.name, err: error, attempt }, `${options.name} did not come back yet`);
      }
    }
  };

  await launch();
  return {
    pid: () => (exited ? undefined : child.pid),
    restarts: () => restartCount,
    stop: async (graceMs = 15_000) => {
      stopping = true;
      if (exited) return;
      killGroup(child.pid, options.stopSignal);
      const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), graceMs);
      await exitPromise;
      clearTimeout(timer);
    },
    kill: () => {
      stopping = true;
      if (!exited) killGroup(child.pid, 'SIGKILL');
    },
  };
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}
