/**
 * Fires due crons through the background-run queue. Every instance polls; the one that locks a due row (cronStore.ts
 * `fireDue`) queues its run and moves `next_run_date` to the next tick after now in the same transaction, so each
 * tick fires once across instances. Ticks missed while no instance ran are not caught up: one run, then the next
 * future tick (as `cron` does). The run id is derived from the cron and its tick, so an instance that died between
 * queueing and committing leaves a run the next instance recognises instead of queueing a second one.
 *
 * An instance sleeps until the next enabled cron is due (by the database's clock), at most `sleepMs`: a cron
 * created or changed anywhere wakes every instance (RunCoordinator's `crons` notification), and the longest sleep only
 * bounds what a lost notification could delay. An idle instance with no crons asks the database once per `sleepMs`,
 * not once a second.
 */
import { logger } from '@graphx/kit/logger';
import type { CronStore, DueCron } from '../storage/cronStore';
import type { RunQueueStore } from '../storage/runQueueStore';
import type { ThreadStore } from '../storage/threadStore';
import type { BackgroundRuns } from './backgroundRuns';
import type { RunCoordinator } from './runCoordinator';
import { nextRunDate, tickRunId } from './cronSchedule';
import type { RunRequest } from './runService';

/** Crons one transaction fires at most (the rest wait for the next poll, a moment later). */
const BATCH = 20;
/**
 * The shortest sleep: a cron due now that this instance could not fire is being fired by another one (it holds the
 * row), which moves its tick on when it commits.
 */
const MIN_SLEEP_MS = 100;
/** After a failure (the database away), the next try. */
const RETRY_MS = 1_000;

export class CronScheduler {
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  private closed = false;

  constructor(
    private readonly deps: {
      crons: CronStore;
      runQueue: RunQueueStore;
      threads: ThreadStore;
      backgroundRuns: BackgroundRuns;
      coordinator: RunCoordinator;
      /** The longest sleep without news (GRAPHX_RUNTIME_CRON_POLL_MS). */
      sleepMs: number;
    },
  ) {
    // A cron created or changed here wakes this scheduler and every other instance's.
    deps.crons.onChanged = () => {
      this.kick();
      void deps.coordinator.announceCronsChanged().catch(() => undefined);
    };
    deps.coordinator.onCronsChanged = () => this.kick();
  }

  /** Fires what is due now, then sleeps until the next tick; called at start and when crons change. */
  kick(): void {
    if (this.closed) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.polling = this.poll()
      .then((sleepMs) => {
        this.polling = null;
        if (this.pollAgain) {
          this.pollAgain = false;
          this.kick();
        } else this.sleep(sleepMs);
      })
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
  }

  private sleep(ms: number): void {
    if (this.closed) return;
    const bounded = Number.isFinite(ms) ? Math.min(Math.max(ms, MIN_SLEEP_MS), this.deps.sleepMs) : this.deps.sleepMs;
    this.timer = setTimeout(() => this.kick(), bounded);
    this.timer.unref();
  }

  /** Fires the due crons; the time until the next one is due. */
  private async poll(): Promise<number> {
    try {
      for (;;) {
        const untilNext = await this.deps.crons.msUntilNextDue();
        if (this.closed || untilNext === null || untilNext > 0) return untilNext ?? this.deps.sleepMs;
        const fired = await this.deps.crons.fireDue(
          BATCH,
          (cron) => this.fire(cron),
          (cron) => nextRunDate(cron.schedule, cron.timezone, cron.end_time, new Date(Math.max(Date.now(), cron.tick.getTime()))),
        );
        // Fewer than a batch: the rest of what is due is locked by another instance; look again after a short sleep.
        if (fired < BATCH) return (await this.deps.crons.msUntilNextDue()) ?? this.deps.sleepMs;
      }
    } catch (error) {
      logger.warn({ err: error }, 'firing crons failed; will retry');
      return RETRY_MS;
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
