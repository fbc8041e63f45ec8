/**
 * Background runs (`POST /runs`, `POST /threads/{id}/runs`): created as queued rows in the deployment's database and
 * executed by whichever instance takes them (runQueueStore.ts), woken by the coordinator's notifications and, at the
 * latest, by a poll every lease period (which also picks up the runs of an instance that died). This instance's
 * events go to RunEvents for join streams.
 */
import { graphConfigFor } from './runConfig';
import { ConflictError, NotFoundError } from '@graphx/kit/errors';
import { logger } from '@graphx/kit/logger';
import type { AuthUser } from '../auth/authUser';
import { RESERVED_FOR, type QueuedRun, type RunQueueStore } from '../storage/runQueueStore';
import { runFields, type Run, type RunStore } from '../storage/runStore';
import type { ThreadStore } from '../storage/threadStore';
import type { RunCoordinator } from './runCoordinator';
import type { RunEventStore } from '../storage/runEventStore';
import type { RunEvents } from './runEvents';
import { RunHandedOverError, type PreparedRun, type RunRequest, type RunService } from './runService';
import { DEFAULT_MULTITASK_STRATEGY } from './threadClaim';

export const FINISHED_STATUSES = new Set(['success', 'error', 'interrupted', 'timeout']);

/** How long the events of a finished run stay for late joiners (the Python server keeps resumable streams 2 min). */
const EVENT_RETENTION_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 60_000;

const isLeaseLost = (reason: unknown) => reason instanceof RunHandedOverError;

export class BackgroundRuns {
  private readonly running = new Map<string, AbortController>();
  /** Pending runs reserved for this instance: a response here follows each (see RunQueueStore.enqueue). */
  private readonly reserved = new Set<string>();
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private closed = false;
  private readonly pollTimer: NodeJS.Timeout;
  private readonly heartbeatTimer: NodeJS.Timeout;
  private lastSweep = 0;

  constructor(
    private readonly deps: {
      runService: RunService;
      queue: RunQueueStore;
      runs: RunStore;
      threads: ThreadStore;
      coordinator: RunCoordinator;
      events: RunEvents;
      eventStore: RunEventStore;
      /** Runs this instance executes at once. */
      concurrency: number;
    },
  ) {
    deps.coordinator.onRunnable = () => this.kick();
    this.pollTimer = setInterval(() => {
      this.kick();
      void this.sweepEvents();
    }, deps.queue.leaseMs);
    this.pollTimer.unref();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), Math.max(100, Math.floor(deps.queue.leaseMs / 3)));
    this.heartbeatTimer.unref();
  }

  /**
   * Queues a run. On a busy thread `reject` is 409, `interrupt`/`rollback` stop the running run first, `enqueue`
   * waits its turn.
   * `runId` names the run (a cron tick's run has an id derived from the tick); a new random one by default.
   * @throws NotFoundError, ForbiddenError, ConflictError before anything is queued.
   */
  async create(
    user: AuthUser | null,
    threadId: string | null,
    clientRequest: RunRequest,
    options: { reserveHere?: boolean; runId?: string } = {},
  ): Promise<Run> {
    const { graph, run, owner, filter, request } = await this.deps.runService.newRun(
      user,
      threadId,
      clientRequest,
      options.runId,
    );
    if (threadId) {
      let thread = await this.deps.threads.get(threadId, filter);
      if (!thread && request.if_not_exists === 'create') {
        // An id taken by a thread the caller may not see is answered as missing (below), never as a conflict.
        thread = await this.deps.threads
          .create({ threadId, metadata: run.metadata, ifExists: 'do_nothing' }, filter)
          .catch((error: unknown) => (error instanceof ConflictError ? null : Promise.reject(error)));
      }
      if (!thread) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
      const active = await this.deps.queue.withStatus(threadId, ['pending', 'running']);
      const busyRunId = thread.status === 'busy' ? ((await this.busyRunOf(threadId)) ?? null) : null;
      const strategy = request.multitask_strategy ?? DEFAULT_MULTITASK_STRATEGY;
      if (strategy === 'reject' && (active.length > 0 || busyRunId)) {
        throw new ConflictError(`Thread ${threadId} is already running a task. Wait for it to finish.`);
      }
      if (strategy === 'interrupt' || strategy === 'rollback') {
        await this.deps.queue.cancelPending(active.map((other) => other.run_id));
        for (const runId of new Set([...active.map((other) => other.run_id), ...(busyRunId ? [busyRunId] : [])])) {
          await this.deps.coordinator.requestCancel(threadId, runId, strategy);
        }
      }
      // As the anchor: an idle thread names the run's graph from its creation, so the thread's state can be read and
      // updated through that graph even when the run is cancelled before it starts.
      if (active.length === 0 && !busyRunId) {
        await this.deps.threads.patchMetadata(threadId, { graph_id: graph.spec.graphId, assistant_id: run.assistant_id }, filter);
      }
    }
    const config = graphConfigFor(user, run, graph, request);
    if (options.reserveHere) this.reserved.add(run.run_id);
    await this.deps.queue.enqueue({ run, owner }, config, options.reserveHere);
    await this.deps.coordinator.announceQueued().catch(() => undefined);
    if (request.after_seconds) {
      // The queue skips the run until its time; this wake-up spares waiting for the next poll.
      setTimeout(
        () => void this.deps.coordinator.announceQueued().catch(() => undefined),
        request.after_seconds * 1000 + 50,
      ).unref();
    }
    return { ...run, status: 'pending' };
  }

  /** Lets the reservation of a run queued with `reserveHere` lapse (its streamed response ended). */
  unreserve(runId: string): void {
    this.reserved.delete(runId);
  }

  /** Stops (running) or cancels (pending) runs. */
  async cancel(threadId: string | null, runIds: string[], action: 'interrupt' | 'rollback'): Promise<void> {
    await this.deps.queue.cancelPending(runIds);
    for (const runId of runIds) await this.deps.coordinator.requestCancel(threadId, runId, action);
  }

  /** Resolves once the run has finished (or after `timeoutMs`); the run as it then is. */
  async waitUntilDone(runId: string, threadId: string | null, timeoutMs: number, signal?: AbortSignal): Promise<Run | null> {
    const deadline = Date.now() + timeoutMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
      const run = await this.deps.queue.get(runId, threadId);
      if (!run || FINISHED_STATUSES.has(run.status) || Date.now() > deadline || signal?.aborted) return run;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  kick(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.pumpAgain) {
        this.pumpAgain = false;
        this.kick();
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    clearInterval(this.heartbeatTimer);
    await this.pumping;
  }

  private async busyRunOf(threadId: string): Promise<string | undefined> {
    const runs = await this.deps.queue.withStatus(threadId, ['running']);
    return runs[0]?.run_id;
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed && this.running.size < this.deps.concurrency) {
        const queued = await this.deps.queue.takeNext();
        if (!queued) return;
        const prepared = await this.prepare(queued);
        if (prepared) void this.execute(prepared, queued.attempt);
      }
    } catch (error) {
      logger.warn({ err: error }, 'taking a background run failed; will retry');
    }
  }

  /** Takes the run's thread (null: put back or failed). A run taken again resumes from its last checkpoint. */
  private async prepare(queued: QueuedRun): Promise<PreparedRun | null> {
    const request = queued.kwargs as unknown as RunRequest;
    const graph = await this.deps.runService.graphFor(queued.assistant_id);
    if (!graph) {
      await this.deps.runs.setStatus(queued.run_id, 'error');
      return null;
    }
    let checkpointBefore: string | null = null;
    if (queued.thread_id) {
      const graphMetadata = { graph_id: graph.spec.graphId, assistant_id: queued.assistant_id };
      const claimed = await this.deps.coordinator.leases.claim(queued.thread_id, queued.run_id, {}, graphMetadata, null);
      if (claimed.kind === 'busy') {
        await this.deps.queue.putBack(queued.run_id);
        return null;
      }
      if (claimed.kind === 'missing') {
        await this.deps.runs.setStatus(queued.run_id, 'error');
        return null;
      }
      // The run of a process that died mid-run never ends by itself: it is recorded as failed (as threadClaim does).
      if (claimed.takenOverRunId) await this.deps.runs.setStatusIfRunning(claimed.takenOverRunId, 'error');
      checkpointBefore = await this.deps.runs.latestCheckpointId(queued.thread_id);
    }
    // A run taken again continues from its own last checkpoint; one that died before writing any starts over.
    const { graphx_checkpoint_before: startedAfter, [RESERVED_FOR]: _reservedFor, ...config } = queued.config;
    if (queued.thread_id) {
      // Read after the claim (ThreadLeases.requestCancel). A run taken over from a dead instance may carry a stop that
      // instance never acted on: the claim cleared the thread's copy, the run's own is read here.
      const askedToStop =
        startedAfter === undefined
          ? await this.deps.queue.rememberStart(queued.run_id, checkpointBefore)
          : await this.deps.queue.stopAskedOf(queued.run_id);
      if (askedToStop) this.deps.coordinator.stopWhenTracked(queued.run_id, askedToStop);
    }
    const resumed = queued.thread_id !== null && startedAfter !== undefined && (checkpointBefore ?? '') !== startedAfter;
    const metadata = { ...(config.metadata as object), run_attempt: queued.attempt };
    return {
      // The run's own fields only: its queue config holds the user object, which no webhook or record may carry.
      run: { ...runFields(queued), status: 'running' },
      owner: queued.owner,
      graph,
      stateful: queued.thread_id !== null,
      request: resumed ? { ...request, input: null, command: null, checkpoint: null, checkpoint_id: undefined } : request,
      graphConfig: { ...config, metadata },
      startedAt: Date.now(),
      checkpointBefore,
      background: true,
    };
  }

  private async execute(prepared: PreparedRun, attempt: number): Promise<void> {
    const runId = prepared.run.run_id;
    const abort = new AbortController();
    this.running.set(runId, abort);
    // A run taken over numbers its events on after those its first executor wrote (joiners hold their ids).
    const firstId = attempt > 1 ? await this.deps.eventStore.nextSeq(runId).catch(() => 0) : 0;
    this.deps.events.open(runId, { threadId: prepared.run.thread_id, firstId });
    try {
      for await (const event of this.deps.runService.execute(prepared, abort.signal)) {
        this.deps.events.publish(runId, event);
      }
    } catch (error) {
      logger.error({ err: error, runId }, 'background run failed');
    } finally {
      await this.deps.events.close(runId, !abort.signal.aborted || !isLeaseLost(abort.signal.reason));
      this.running.delete(runId);
      this.kick();
    }
  }

  /** Drops the events of runs finished long ago, at most once a minute per instance. */
  private async sweepEvents(): Promise<void> {
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    await this.deps.eventStore.sweep(EVENT_RETENTION_MS).catch((error: unknown) => {
      logger.warn({ err: error }, 'sweeping old run events failed; will retry');
    });
  }

  private async heartbeat(): Promise<void> {
    const runIds = [...this.running.keys()];
    for (const runId of runIds) this.reserved.delete(runId);
    if (this.reserved.size > 0) {
      await this.deps.queue.extendReservations([...this.reserved]).catch((error: unknown) => {
        logger.warn({ err: error }, 'extending run reservations failed; will retry');
      });
    }
    if (runIds.length === 0) return;
    try {
      const held = await this.deps.queue.heartbeat(runIds);
      // A run another instance took over (this one was too slow to extend its lease) stops here: never two executors.
      for (const runId of runIds) if (!held.has(runId)) this.running.get(runId)?.abort(new RunHandedOverError());
    } catch (error) {
      logger.warn({ err: error }, 'extending background run leases failed; will retry');
    }
  }
}
