/**
 * What runtime processes sharing one database tell each other about thread runs, without polling loops: one LISTEN
 * connection per process on channel `graphx_runtime` carries "cancel run X" and "thread T released"; a heartbeat every
 * third of the lease keeps this process's leases alive and picks up cancel requests whose notification was lost.
 * Waiting for a thread (multitask `enqueue`, `interrupt`, `rollback`) wakes on its release notification, and at the
 * latest after one lease period, so a thread whose owner died is taken over once its lease has expired.
 */
import { Client, type Pool } from 'pg';
import { logger } from '@graphx/kit/logger';
import type { CancelAction, ThreadLeases } from '../storage/threadLeases';
import { connectionErrorFields } from '../storage/idleConnections';

const CHANNEL = 'graphx_runtime';
const RECONNECT_DELAY_MS = 1_000;
/** Bound on remembered stops of runs not (yet) running here, however many cancels a burst brings. */
const MAX_EARLY_STOPS = 10_000;

type Message =
  | { type: 'cancel'; run_id: string; action: CancelAction }
  | { type: 'released'; thread_id: string }
  | { type: 'queued' }
  | { type: 'crons' }
  | { type: 'events'; run_id: string | null; thread_id: string | null; origin?: string };

/** Why a thread run stopped early; `lease-lost`: another process took the thread over. */
export type StopReason = CancelAction | 'client' | 'lease-lost';

interface LocalRun {
  abort: AbortController;
  reason: StopReason | null;
}

export class RunCoordinator {
  private readonly local = new Map<string, LocalRun>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /**
   * Stops that arrived for runs this process does not track (yet): a run taken from the queue is tracked only once it
   * has claimed its thread and started, and a cancel notification may come first. Every instance hears every cancel,
   * so entries for runs executed elsewhere are dropped after one lease period.
   */
  private readonly earlyStops = new Map<string, { action: CancelAction; at: number }>();
  private listener: Client | null = null;
  /** Called when a background run may have become runnable (queued, or a thread released). */
  onRunnable: () => void = () => undefined;
  /** Called when some instance created or changed a cron (announceCronsChanged). */
  onCronsChanged: () => void = () => undefined;
  /** Called when some instance wrote events of a run (RunEventStore.append sends that notification). */
  onEvents: (runId: string | null, threadId: string | null) => void = () => undefined;
  private closed = false;
  private readonly heartbeatTimer: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly databaseUri: string,
    readonly leases: ThreadLeases,
  ) {
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), Math.max(100, Math.floor(leases.leaseMs / 3)));
    this.heartbeatTimer.unref();
  }

  /** Connects the LISTEN connection (reconnecting on failure until `close`). */
  async start(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUri });
    client.on('notification', (message) => this.onMessage(message.payload));
    client.on('error', (error) => {
      logger.warn({ err: connectionErrorFields(error) }, 'runtime notification connection failed; reconnecting');
      this.listener = null;
      client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.start().catch(() => undefined), RECONNECT_DELAY_MS).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.listener = client;
  }

  /** Registers a running thread run of this process; the returned signal aborts on any stop request. */
  track(runId: string, clientSignal: AbortSignal): { signal: AbortSignal; reason: () => StopReason | null; untrack: () => void } {
    const entry: LocalRun = { abort: new AbortController(), reason: null };
    this.local.set(runId, entry);
    const early = this.earlyStops.get(runId);
    if (early) {
      this.earlyStops.delete(runId);
      this.stopLocal(runId, early.action);
    }
    const onClient = () => this.stopLocal(runId, 'client');
    clientSignal.addEventListener('abort', onClient, { once: true });
    if (clientSignal.aborted) onClient();
    return {
      signal: entry.abort.signal,
      reason: () => entry.reason,
      untrack: () => {
        clientSignal.removeEventListener('abort', onClient);
        this.local.delete(runId);
      },
    };
  }

  /** Asks whichever process runs `runId` (on `threadId`, null for a threadless background run) to stop it. */
  async requestCancel(threadId: string | null, runId: string, action: CancelAction): Promise<void> {
    if (threadId && !(await this.leases.requestCancel(threadId, runId, action))) return;
    await this.notify({ type: 'cancel', run_id: runId, action });
  }

  /** Stops `runId` as soon as this process tracks it (a stop asked of it before it started here). */
  stopWhenTracked(runId: string, action: CancelAction): void {
    if (this.local.has(runId)) this.stopLocal(runId, action);
    else this.rememberEarlyStop(runId, action);
  }

  /**
   * Stops `runId` on whichever process runs it, for a thread that is gone (deleted), and resolves once that process
   * let go of the thread or after `timeoutMs`, so that nothing the run writes afterwards outlives the deletion.
   */
  async stopRunOfDeletedThread(threadId: string, runId: string, timeoutMs: number): Promise<void> {
    const released = this.waitForRelease(threadId, timeoutMs);
    await this.notify({ type: 'cancel', run_id: runId, action: 'interrupt' });
    await released;
  }

  /** Tells every process that a background run was queued. */
  async announceQueued(): Promise<void> {
    await this.notify({ type: 'queued' });
  }

  /** Tells every process that a cron was created or changed (its scheduler may have to wake sooner). */
  async announceCronsChanged(): Promise<void> {
    await this.notify({ type: 'crons' });
  }

  /** Tells waiting processes that the thread is free. */
  async announceRelease(threadId: string): Promise<void> {
    await this.notify({ type: 'released', thread_id: threadId });
  }

  /** Resolves when `threadId` is announced released, or after `timeoutMs`. */
  waitForRelease(threadId: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(threadId) ?? new Set();
      this.waiters.set(threadId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(threadId);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      set.add(done);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeatTimer);
    for (const set of this.waiters.values()) for (const wake of [...set]) wake();
    await this.listener?.end().catch(() => undefined);
  }

  private rememberEarlyStop(runId: string, action: CancelAction): void {
    const now = Date.now();
    // Map order is insertion order: the oldest entries come first.
    for (const [id, { at }] of this.earlyStops) {
      if (now - at < this.leases.leaseMs && this.earlyStops.size < MAX_EARLY_STOPS) break;
      this.earlyStops.delete(id);
    }
    this.earlyStops.delete(runId);
    this.earlyStops.set(runId, { action, at: now });
  }

  private stopLocal(runId: string, reason: StopReason): void {
    const entry = this.local.get(runId);
    if (!entry || entry.reason) return;
    entry.reason = reason;
    entry.abort.abort(new Error(`run stopped: ${reason}`));
  }

  private onMessage(payload: string | undefined): void {
    let message: Message;
    try {
      message = JSON.parse(payload ?? '') as Message;
    } catch {
      return;
    }
    if (message.type === 'cancel') this.stopWhenTracked(message.run_id, message.action);
    else if (message.type === 'released') {
      for (const wake of [...(this.waiters.get(message.thread_id) ?? [])]) wake();
      this.onRunnable();
    } else if (message.type === 'queued') this.onRunnable();
    else if (message.type === 'crons') this.onCronsChanged();
    // This instance's own writes woke its followers already (RunEvents); the echo would only cost them a query each.
    else if (message.type === 'events' && message.origin !== this.leases.owner) this.onEvents(message.run_id, message.thread_id);
  }

  private async notify(message: Message): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(message)]);
  }

  private async heartbeat(): Promise<void> {
    const runIds = [...this.local.keys()];
    if (runIds.length === 0) return;
    try {
      const held = await this.leases.heartbeat(runIds);
      for (const runId of runIds) {
        // Only runs still tracked: one that ended during the query released its thread itself.
        if (!this.local.has(runId)) continue;
        const action = held.get(runId);
        if (action === undefined) this.stopLocal(runId, 'lease-lost');
        else if (action) this.stopLocal(runId, action);
      }
    } catch (error) {
      logger.warn({ err: error }, 'extending thread leases failed; will retry');
    }
  }
}
