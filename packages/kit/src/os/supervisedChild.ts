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
  const supervisor = new Supervisor(options);
  await supervisor.launch();
  return {
    pid: () => supervisor.pid(),
    restarts: () => supervisor.restartCount,
    stop: (graceMs = 15_000) => supervisor.stop(graceMs),
    kill: () => supervisor.kill(),
  };
}

/** The supervised process across its restarts: the current child, whether it exited, whether a stop was asked. */
class Supervisor {
  private child!: ChildProcess;
  private exited = false;
  private exitPromise: Promise<void> = Promise.resolve();
  private stopping = false;
  restartCount = 0;
  private readonly recentRestarts: number[] = [];

  constructor(private readonly options: SupervisedChildOptions) {}

  pid(): number | undefined {
    return this.exited ? undefined : this.child.pid;
  }

  /** Starts a process and waits until it serves; one that exits first or never serves is killed and the start fails. */
  async launch(): Promise<void> {
    const { options } = this;
    this.exited = false;
    const current = spawnInOwnSession(options);
    this.child = current;
    options.onLaunch?.(current.pid);
    let ready = false;
    this.exitPromise = new Promise<void>((resolve) =>
      current.once('exit', (code, signal) => {
        this.exited = true;
        resolve();
        // Only a server that had come up is restarted here; a failed start is retried by restart() itself.
        if (ready && !this.stopping && options.supervise !== false) void this.restart(code, signal);
      }),
    );
    try {
      // A process that exits during start-up fails the start at once, not after the readiness timeout.
      const exitedEarly = this.exitPromise.then(() => {
        if (ready) return;
        const tail = options.logFile ? fs.readFileSync(options.logFile, 'utf8').slice(-1500) : '';
        throw new Error(`${options.name} exited during start-up${tail ? `; last lines of ${options.logFile}:\n${tail}` : ''}`);
      });
      await Promise.race([options.waitReady(current, () => this.exited), exitedEarly]);
      ready = true;
    } catch (error) {
      killGroup(current.pid, 'SIGKILL');
      throw error;
    }
  }

  /** Stops it: `stopSignal` to its group, SIGKILL after `graceMs`. No restart follows. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.exited) return;
    killGroup(this.child.pid, this.options.stopSignal);
    const timer = setTimeout(() => killGroup(this.child.pid, 'SIGKILL'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
  }

  kill(): void {
    this.stopping = true;
    if (!this.exited) killGroup(this.child.pid, 'SIGKILL');
  }

  private async restart(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    const { name } = this.options;
    if (!this.mayRestart()) {
      logger.error({ component: name }, `${name} keeps dying; not restarting it again (restart graphx)`);
      return;
    }
    logger.error({ component: name, code, signal }, `${name} exited unexpectedly; restarting it`);
    // A killed server's children may still hold its port or shared memory for a moment: retry a few times.
    for (let attempt = 1; attempt <= 10 && !this.stopping; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      if (this.stopping) return;
      try {
        await this.launch();
        this.restartCount += 1;
        logger.warn({ component: name, pid: this.child.pid }, `${name} restarted`);
        return;
      } catch (error) {
        logger.warn({ component: name, err: error, attempt }, `${name} did not come back yet`);
      }
    }
  }

  /** True (and counted) unless MAX_RESTARTS happened within RESTART_WINDOW_MS: a process that keeps dying is left dead. */
  private mayRestart(): boolean {
    const now = Date.now();
    while (this.recentRestarts.length > 0 && this.recentRestarts[0]! < now - RESTART_WINDOW_MS) this.recentRestarts.shift();
    if (this.recentRestarts.length >= MAX_RESTARTS) return false;
    this.recentRestarts.push(now);
    return true;
  }
}

/** Spawns the process as the leader of its own session, its output to `logFile` (opened anew), inherited, or nowhere. */
function spawnInOwnSession(options: SupervisedChildOptions): ChildProcess {
  const log = options.inheritOutput ? 'inherit' : options.logFile ? fs.openSync(options.logFile, 'a') : 'ignore';
  let child: ChildProcess;
  try {
    child = spawn(options.command, options.args, { ...options.spawnOptions, stdio: ['ignore', log, log], detached: true });
  } finally {
    if (typeof log === 'number') fs.closeSync(log);
  }
  child.on('error', () => {});
  return child;
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
