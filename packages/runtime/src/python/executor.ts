/**
 * The Python executor (packages/runtime/python/graphx_executor), one child process per runtime process, and the
 * JSON-lines RPC with it over a socketpair inherited as its fd 3 (so no other process can connect, and the graph's
 * own prints on stdout/stderr stay app logs). Requests are multiplexed by id; a stream is `chunk` lines then the
 * answer; an aborted call sends `{cancel: id}` and still waits for the answer, so the graph has stopped (and its
 * checkpoint writes have landed) when the caller hears of it. A cancelled call still unanswered after a grace period
 * means an executor that cannot stop its graph (sync code blocking its event loop, a graph that swallows its
 * cancellation): the executor is killed, and its server stops to be replaced, as when the kernel kills it. The
 * executor calls back for the long-term store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Socket } from 'node:net';
import { LineAssembler } from '@graphx/kit/lineAssembler';
import { logger } from '@graphx/kit/logger';

/** This package's folder, from its sources (src/python/) or from its bundle (dist/). */
function runtimePackageDir(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** The executor's Python package (put on PYTHONPATH: nothing is installed for it). */
export const EXECUTOR_PYTHONPATH = path.join(runtimePackageDir(), 'python');

/** A failure the executor reported: the graph's exception type and message (an HTTPException keeps its fields). */
export class PythonError extends Error {
  readonly type: string;
  readonly statusCode?: number;
  readonly detail?: unknown;
  readonly headers?: Record<string, string>;

  constructor(payload: {
    type?: string;
    message?: string;
    status_code?: number;
    detail?: unknown;
    headers?: Record<string, string>;
  }) {
    super(payload.message ?? 'Python executor error');
    this.type = payload.type ?? 'Error';
    this.name = this.type;
    this.statusCode = payload.status_code;
    this.detail = payload.detail;
    this.headers = payload.headers;
  }
}

interface Pending {
  onChunk?: (chunk: unknown) => void;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

export type ServerMethod = (params: Record<string, any>) => Promise<unknown>;

/** `killedFor`: why this side killed the executor (null when something else ended it). */
export type ExecutorLossListener = (code: number | null, signal: NodeJS.Signals | null, killedFor: string | null) => void;

export class PythonExecutor {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exited: Error | null = null;
  private readonly lostListeners: Array<ExecutorLossListener> = [];
  /** Why this side killed the executor, if it did. */
  private killedFor: string | null = null;

  private constructor(
    private readonly child: ChildProcess,
    private readonly socket: Socket,
    private readonly serverMethods: Record<string, ServerMethod>,
    private readonly cancelGraceMs: number,
  ) {
    // One JSON message per line. Not node:readline: it brings the REPL's line editing along (~3 MB resident).
    const lines = new LineAssembler((line) => this.onLine(line));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => lines.push(chunk));
    socket.on('end', () => lines.end());
    // A killed executor resets the socket when data it never read was waiting (a cancel, say): the exit says why, and
    // an unheard 'error' would end this process before it can.
    socket.on('error', (error) => logger.debug({ err: error }, "the Python executor's socket failed"));
    child.once('exit', (code, signal) => {
      this.exited = new Error(`the Python executor exited (${signal ?? `code ${code}`})`);
      for (const call of this.pending.values()) call.reject(this.exited);
      this.pending.clear();
      if (this.closing) return;
      logger.error({ code, signal }, 'the Python executor exited');
      for (const listener of this.lostListeners) listener(code, signal, this.killedFor);
    });
  }

  private closing = false;

  /**
   * Starts `python -m graphx_executor` with the deployment's database and the app's environment.
   * @param serverMethods what the executor may call (the long-term store).
   */
  static start(options: {
    python: string;
    databaseUri: string;
    appDir: string;
    env?: Record<string, string | undefined>;
    /** Folders in front of the environment's site-packages (a built environment's local folders: pythonImportRoots). */
    importRoots?: string[];
    serverMethods: Record<string, ServerMethod>;
    /** How long a cancelled call may stay unanswered before the executor is killed (default 30 s). */
    cancelGraceMs?: number;
  }): PythonExecutor {
    const pythonPath = [EXECUTOR_PYTHONPATH, options.appDir, ...(options.importRoots ?? [])].join(path.delimiter);
    const child = spawn(options.python, ['-m', 'graphx_executor'], {
      cwd: options.appDir,
      env: {
        ...(options.env ?? process.env),
        DATABASE_URI: options.databaseUri,
        PYTHONPATH: pythonPath,
        PYTHONUNBUFFERED: '1',
        GRAPHX_EXECUTOR_FD: '3',
        // The executor asks the kernel to end it with this process (prctl PR_SET_PDEATHSIG).
        GRAPHX_EXECUTOR_PARENT: String(process.pid),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
    });
    return new PythonExecutor(child, child.stdio[3] as Socket, options.serverMethods, options.cancelGraceMs ?? 30_000);
  }

  /**
   * Hears the executor end when nobody closed it (killed by the kernel's OOM killer, a crash): every later call of a
   * Python graph would fail while the server still answers /ok, so the server must go and be replaced.
   */
  onUnexpectedExit(listener: ExecutorLossListener): void {
    this.lostListeners.push(listener);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private write(message: unknown): void {
    this.socket.write(`${JSON.stringify(message)}\n`);
  }

  private onLine(line: string): void {
    const message = JSON.parse(line) as Record<string, any>;
    if (message.call !== undefined) {
      void this.answerCall(message.call as number, String(message.method), message.params ?? {});
      return;
    }
    const call = this.pending.get(message.id as number);
    if (!call) return;
    if ('chunk' in message) {
      call.onChunk?.(message.chunk);
      return;
    }
    this.pending.delete(message.id as number);
    if (message.error) call.reject(new PythonError(message.error));
    else call.resolve(message.result);
  }

  private async answerCall(id: number, method: string, params: Record<string, any>): Promise<void> {
    try {
      const handler = this.serverMethods[method];
      if (!handler) throw new Error(`unknown server method ${method}`);
      this.write({ reply: id, result: (await handler(params)) ?? null });
    } catch (error) {
      this.write({ reply: id, error: { type: (error as Error).name, message: (error as Error).message } });
    }
  }

  /** Calls `method` and resolves with its answer; `onChunk` hears a stream's chunks; `signal` cancels it. */
  call<T = unknown>(
    method: string,
    params: Record<string, unknown>,
    options: { onChunk?: (chunk: unknown) => void; signal?: AbortSignal } = {},
  ): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      let stuck: NodeJS.Timeout | undefined;
      const onAbort = () => {
        this.write({ cancel: id });
        stuck = setTimeout(() => this.killStuck(method), this.cancelGraceMs);
        stuck.unref();
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        clearTimeout(stuck);
        options.signal?.removeEventListener('abort', onAbort);
      };
      this.pending.set(id, {
        onChunk: options.onChunk,
        resolve: (result) => {
          settle();
          resolve(result as T);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.write({ id, method, params });
      if (options.signal?.aborted) onAbort();
    });
  }

  private killStuck(method: string): void {
    if (this.exited || this.killedFor) return;
    const seconds = Math.round(this.cancelGraceMs / 100) / 10;
    this.killedFor =
      `a cancelled ${method} call did not stop within ${seconds} s (sync code blocking the executor's event loop, or a ` +
      'graph that ignores its cancellation)';
    logger.error({ method, graceMs: this.cancelGraceMs }, `killing the Python executor: ${this.killedFor}`);
    this.child.kill('SIGKILL');
  }

  /** A streaming call as an async iterable of its chunks (ends with the answer; a failure is thrown). */
  async *stream(method: string, params: Record<string, unknown>, signal?: AbortSignal): AsyncGenerator<unknown> {
    const queue: unknown[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    let failure: Error | null = null;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    if (signal?.aborted) stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finished = this.call(method, params, {
      signal: stop.signal,
      onChunk: (chunk) => {
        queue.push(chunk);
        wake?.();
      },
    }).then(
      () => {
        done = true;
        wake?.();
      },
      (error: Error) => {
        failure = error;
        done = true;
        wake?.();
      },
    );
    try {
      while (true) {
        if (queue.length > 0) {
          yield queue.shift();
          continue;
        }
        if (done) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
      if (failure) throw failure;
    } finally {
      // A consumer that stops early (a client gone) cancels the graph and waits for it to stop.
      signal?.removeEventListener('abort', onAbort);
      if (!done) stop.abort();
      await finished;
    }
  }

  /** Closes the socket (the executor ends by itself) and waits for the process, killing it after `graceMs`. */
  async close(graceMs = 5_000): Promise<void> {
    this.closing = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.socket.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
