/**
 * Finished runs leave the request path here: they are queued in memory and written in batches (one round trip per
 * batch), so a stream closes without waiting on the database. A failed write is retried; `close()` drains the queue
 * before the process exits.
 */
import { logger } from '@graphx/kit/logger';
import type { OwnedRun, RunStore, TraceRecord } from '../storage/runStore';

const BATCH_SIZE = 500;
const MAX_QUEUED = 50_000;

export class RunRecorder {
  private runs: OwnedRun[] = [];
  private traces: TraceRecord[] = [];
  private flushing: Promise<void> | null = null;
  private retryDelayMs = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: RunStore,
    /** Called after trace records reached the outbox. */
    private readonly onTracesWritten: () => void,
  ) {}

  /** Queues a finished run (null for thread runs, whose row exists already) and its trace record. */
  record(run: OwnedRun | null, trace: TraceRecord | null): void {
    if (run) this.runs.push(run);
    if (trace) this.traces.push(trace);
    if (this.runs.length + this.traces.length > MAX_QUEUED) {
      logger.error({ dropped: this.runs.length }, 'run records dropped: the database has been unwritable too long');
      this.runs = [];
      this.traces = [];
    }
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.flushing) return;
    // setImmediate batches every run that ends in the same turn of the event loop.
    this.timer =
      delayMs === 0
        ? (setImmediate(() => this.startFlush()) as unknown as NodeJS.Timeout)
        : setTimeout(() => this.startFlush(), delayMs);
  }

  private startFlush(): void {
    this.timer = null;
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = null;
      if (this.runs.length > 0 || this.traces.length > 0) this.schedule(this.retryDelayMs);
    });
  }

  private async flushOnce(): Promise<void> {
    const runs = this.runs.splice(0, BATCH_SIZE);
    const traces = this.traces.splice(0, BATCH_SIZE);
    if (runs.length === 0 && traces.length === 0) return;
    try {
      await this.store.writeFinished(runs, traces);
      this.retryDelayMs = 0;
      if (traces.length > 0) this.onTracesWritten();
    } catch (error) {
      this.runs.unshift(...runs);
      this.traces.unshift(...traces);
      this.retryDelayMs = Math.min(Math.max(this.retryDelayMs * 2, 200), 10_000);
      logger.warn({ err: error, retryInMs: this.retryDelayMs }, 'writing run records failed; will retry');
    }
  }

  /** Writes everything queued (retrying for up to `timeoutMs`). */
  async close(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.runs.length > 0 || this.traces.length > 0 || this.flushing) && Date.now() < deadline) {
      if (this.timer) {
        clearTimeout(this.timer);
        clearImmediate(this.timer as unknown as NodeJS.Immediate);
        this.timer = null;
      }
      if (this.flushing) await this.flushing;
      else this.startFlush();
      if (this.retryDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryDelayMs, 500)));
    }
  }
}
