/**
 * Fires due crons through the background-run queue. Every instance polls; the one that locks a due row (cronStore.ts
 * `fireDue`) queues its run and moves `next_run_date` to the next tick after now in the same transaction, so each
 * tick fires once across instances. Ticks missed while no instance ran are not caught up: one run, then the next
 * future tick (as `cron` does). The run id is derived from the cron and its tick, so an instance that died between
 * queueing and committing leaves a run the next instance recognises instead of queueing a second one.
 */
import { logger } from '@graphx/kit/logger';
import type { CronStore, DueCron } from '../storage/cronStore';
import type { RunQueueStore } from '../storage/runQueueStore';
import type { ThreadStore } from '../storage/threadStore';
import type { BackgroundRuns } from './backgroundRuns';
import { nextRunDate, tickRunId } from './cronSchedule';
import type { RunRequest } from './runService';

/** Crons one transaction fires at most (the rest wait for the next poll, a moment later). */
const BATCH = 20;

export class CronScheduler {
  private readonly timer: NodeJS.Timeout;
  private polling: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly deps: {
      crons: CronStore;
      runQueue: RunQueueStore;
      threads: ThreadStore;
      backgroundRuns: BackgroundRuns;
      pollMs: number;
    },
  ) {
    this.timer = setInterval(() => this.kick(), deps.pollMs);
    this.timer.unref();
  }

  kick(): void {
    if (this.closed || this.polling) return;
    this.polling = this.poll().finally(() => (this.polling = null));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.polling;
  }

  private async poll(): Promise<void> {
    try {
      while (!this.closed && (await this.deps.crons.anyDue())) {
        const fired = await this.deps.crons.fireDue(
          BATCH,
          (cron) => this.fire(cron),
          (cron) => nextRunDate(cron.schedule, cron.timezone, cron.end_time, new Date(Math.max(Date.now(), cron.tick.getTime()))),
        );
        if (fired < BATCH) return;
      }
    } catch (error) {
      logger.warn({ err: error }, 'firing crons failed; will retry');
    }
  }

  /** Queues the tick's run. A tick whose run cannot be created (thread gone, thread busy under `reject`) is skipped. */
  private async fire(cron: DueCron): Promise<void> {
    const runId = tickRunId(cron.cron_id, cron.tick);
    if (await this.deps.runQueue.exists(runId)) return;
    const streamMode = cron.payload.stream_mode;
    const request = {
      on_disconnect: 'continue',
      ...cron.payload,
      stream_mode: Array.isArray(streamMode) ? streamMode : streamMode ? [streamMode] : ['values'],
      assistant_id: cron.assistant_id,
      metadata: { ...cron.metadata, cron_id: cron.cron_id },
    } as RunRequest;
    try {
      let threadId = cron.thread_id;
      if (!threadId && cron.on_run_completed === 'keep') {
        const metadata = { ...cron.metadata, cron_id: cron.cron_id };
        threadId = (await this.deps.threads.create({ metadata, ifExists: 'raise' }, {})).thread_id;
      }
      await this.deps.backgroundRuns.create(cron.auth_user, threadId, request, { runId });
    } catch (error) {
      logger.warn({ err: error, cronId: cron.cron_id, tick: cron.tick.toISOString() }, 'cron tick skipped');
    }
  }
}
