/**
 * The background-run queue in the deployment's database. A run is taken by exactly one instance: the pending row is
 * locked (`FOR UPDATE SKIP LOCKED`) and moved to `running` with this instance as owner and a lease; the owner's
 * heartbeat extends the lease. A running run whose lease expired belongs to a dead instance and is taken again
 * (its attempt grows; a thread run then resumes from its last checkpoint). A thread run is only taken while its
 * thread is free, so runs of one thread execute in creation order (multitask `enqueue`). A run created with
 * `after_seconds` is not taken before its time (the delay stays in its kwargs; no column of its own).
 */
import type { Pool } from 'pg';
import type { OwnedRun, Run, RunOwner, RunStatus } from './runStore';
import type { ContainmentFilter } from './threadStore';
import type { CancelAction } from './threadLeases';

export interface QueuedRun extends Run {
  config: Record<string, unknown>;
  attempt: number;
  owner: RunOwner;
}

/** Config key naming the instance a pending run is reserved for (see enqueue). */
export const RESERVED_FOR = 'graphx_reserved_for';

const COLUMNS =
  'r.run_id, r.thread_id, r.assistant_id, r.status, r.metadata, r.kwargs, r.multitask_strategy, r.created_at, r.updated_at';

/**
 * A run a reader with filter `$f` may see (runStore.ts `RunOwner`): a thread run through its thread's metadata, a
 * threadless run through its own metadata with its creator's scope over it. Needs `graphx_threads t` left-joined.
 */
const visibleRun = (f: string) =>
  `(CASE WHEN r.thread_id IS NULL THEN (r.metadata || r.auth_scope) @> ${f} ELSE t.metadata @> ${f} END)`;

function toQueuedRun(row: Record<string, any>): QueuedRun {
  return {
    ...row,
    created_at: (row.created_at as Date).toISOString(),
    updated_at: (row.updated_at as Date).toISOString(),
  } as QueuedRun;
}

export class RunQueueStore {
  /**
   * `reservedOnly`: this instance takes only the runs reserved for it (an API-side instance, GRAPHX_RUNTIME_ROLE=api,
   * whose background runs are executed by queue-side instances over the same database).
   */
  constructor(
    private readonly pool: Pool,
    readonly owner: string,
    readonly leaseMs: number,
    private readonly reservedOnly = false,
  ) {}

  /**
   * Queues a run. `reserved`: a streamed run whose response is held by this instance; only this instance takes it
   * while it keeps extending the reservation (extendReservations), since its events exist only where it executes.
   */
  async enqueue({ run, owner }: OwnedRun, config: Record<string, unknown>, reserved = false): Promise<void> {
    await this.pool.query(
      `INSERT INTO graphx_runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at,
                                updated_at, background, config, lease_expires_at, auth_identity, auth_scope)
       VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $7, true, $8,
               CASE WHEN $9::boolean THEN now() + $10 * interval '1 millisecond' END, $11, $12)`,
      [
        run.run_id,
        run.thread_id,
        run.assistant_id,
        run.metadata,
        run.kwargs,
        run.multitask_strategy,
        run.created_at,
        reserved ? { ...config, [RESERVED_FOR]: this.owner } : config,
        reserved,
        this.leaseMs,
        owner.identity,
        JSON.stringify(owner.scope),
      ],
    );
  }

  /** Keeps this instance's reservations of pending runs (a reservation not extended lapses after one lease). */
  async extendReservations(runIds: string[]): Promise<void> {
    await this.pool.query(
      `UPDATE graphx_runs SET lease_expires_at = now() + $3 * interval '1 millisecond'
        WHERE run_id = ANY($1::uuid[]) AND status = 'pending' AND config->>'${RESERVED_FOR}' = $2`,
      [runIds, this.owner, this.leaseMs],
    );
  }

  /**
   * Takes the oldest runnable run (pending, or running under an expired lease; only those reserved for this instance
   * when `reservedOnly`); null when there is none.
   */
  async takeNext(): Promise<QueuedRun | null> {
    const result = await this.pool.query(
      `UPDATE graphx_runs r SET status = 'running', owner = $1, attempt = r.attempt + 1, updated_at = now(),
              lease_expires_at = now() + $2 * interval '1 millisecond'
        WHERE r.run_id = (
          SELECT q.run_id FROM graphx_runs q LEFT JOIN graphx_threads t ON t.thread_id = q.thread_id
           WHERE q.background
             AND ((q.status = 'pending' AND (q.config->>'${RESERVED_FOR}' IS NULL OR q.config->>'${RESERVED_FOR}' = $1
                                             OR q.lease_expires_at IS NULL OR q.lease_expires_at < now()))
                  OR (q.status = 'running' AND q.lease_expires_at < now()))
             AND (NOT $3::boolean OR (q.status = 'pending' AND q.config->>'${RESERVED_FOR}' = $1))
             AND q.created_at + coalesce((q.kwargs->>'after_seconds')::float8, 0) * interval '1 second' <= now()
             AND (q.thread_id IS NULL OR t.status <> 'busy' OR t.lease_expires_at < now() OR t.busy_run_id = q.run_id)
             AND NOT EXISTS (SELECT 1 FROM graphx_runs e WHERE e.thread_id = q.thread_id AND e.background
                              AND e.status IN ('pending', 'running') AND e.created_at < q.created_at
                              AND NOT (e.status = 'running' AND e.lease_expires_at < now()))
           ORDER BY q.created_at LIMIT 1 FOR UPDATE OF q SKIP LOCKED)
        RETURNING ${COLUMNS}, r.config, r.attempt, r.auth_identity, r.auth_scope`,
      [this.owner, this.leaseMs, this.reservedOnly],
    );
    const row = result.rows[0];
    if (!row) return null;
    const { auth_identity: identity, auth_scope: scope, ...queued } = row;
    return { ...toQueuedRun(queued), owner: { identity, scope } };
  }

  /**
   * Remembers the thread's newest checkpoint when the run first started (a later attempt resumes after it). Called
   * after the run claimed its thread; returns the stop asked of the run before then (ThreadLeases.requestCancel).
   */
  async rememberStart(runId: string, checkpointId: string | null): Promise<CancelAction | null> {
    const result = await this.pool.query(
      `UPDATE graphx_runs SET config = config || jsonb_build_object('graphx_checkpoint_before', $2::text) WHERE run_id = $1
       RETURNING cancel_action`,
      [runId, checkpointId ?? ''],
    );
    return (result.rows[0]?.cancel_action as CancelAction | null | undefined) ?? null;
  }

  /** The stop asked of a run (ThreadLeases.requestCancel) and not yet acted on: null when none. */
  async stopAskedOf(runId: string): Promise<CancelAction | null> {
    const result = await this.pool.query(`SELECT cancel_action FROM graphx_runs WHERE run_id = $1`, [runId]);
    return (result.rows[0]?.cancel_action as CancelAction | null | undefined) ?? null;
  }

  /** Puts a taken run back (its thread turned out busy). */
  async putBack(runId: string): Promise<void> {
    await this.pool.query(
      `UPDATE graphx_runs SET status = 'pending', owner = NULL, lease_expires_at = NULL, attempt = attempt - 1
        WHERE run_id = $1 AND owner = $2`,
      [runId, this.owner],
    );
  }

  /** Extends this instance's leases; returns the runs it still owns (one missing was taken over). */
  async heartbeat(runIds: string[]): Promise<Set<string>> {
    const result = await this.pool.query(
      `UPDATE graphx_runs SET lease_expires_at = now() + $3 * interval '1 millisecond'
        WHERE run_id = ANY($1::uuid[]) AND owner = $2 AND status = 'running' RETURNING run_id`,
      [runIds, this.owner, this.leaseMs],
    );
    return new Set(result.rows.map((row) => row.run_id as string));
  }

  /** Whether a run with this id exists, on any thread or none. */
  async exists(runId: string): Promise<boolean> {
    const result = await this.pool.query('SELECT 1 FROM graphx_runs WHERE run_id = $1', [runId]);
    return result.rowCount === 1;
  }

  /**
   * The run `runId` on thread `threadId` (null: a threadless run). With `visibleTo`, only a run the reader's filter
   * shows (a thread run's thread must match it too): one outside it is answered as missing.
   */
  async get(runId: string, threadId: string | null, visibleTo?: ContainmentFilter): Promise<Run | null> {
    const result = await this.pool.query(
      `SELECT ${COLUMNS} FROM graphx_runs r LEFT JOIN graphx_threads t ON t.thread_id = r.thread_id
        WHERE r.run_id = $1 AND r.thread_id IS NOT DISTINCT FROM $2 AND ($3::jsonb IS NULL OR ${visibleRun('$3::jsonb')})`,
      [runId, threadId, visibleTo ? JSON.stringify(visibleTo) : null],
    );
    return result.rows[0] ? toQueuedRun(result.rows[0]) : null;
  }

  /**
   * Runs with one of `statuses` (null: any) the reader's filter shows, of one thread or of every thread (and none),
   * only `runIds` when given: what a bulk cancel may act on.
   */
  async visibleWithStatus(
    query: { threadId: string | null; statuses: RunStatus[] | null; runIds: string[] | null },
    visibleTo: ContainmentFilter,
  ): Promise<Run[]> {
    const result = await this.pool.query(
      `SELECT ${COLUMNS} FROM graphx_runs r LEFT JOIN graphx_threads t ON t.thread_id = r.thread_id
        WHERE ($1::uuid IS NULL OR r.thread_id = $1) AND ($2::text[] IS NULL OR r.status = ANY($2))
          AND ($3::uuid[] IS NULL OR r.run_id = ANY($3::uuid[])) AND ${visibleRun('$4::jsonb')}`,
      [query.threadId, query.statuses, query.runIds, JSON.stringify(visibleTo)],
    );
    return result.rows.map(toQueuedRun);
  }

  /** Cancels runs not yet started; returns the ids it cancelled. */
  async cancelPending(runIds: string[]): Promise<string[]> {
    const result = await this.pool.query(
      `UPDATE graphx_runs SET status = 'interrupted', updated_at = now() WHERE run_id = ANY($1::uuid[]) AND status = 'pending'
        RETURNING run_id`,
      [runIds],
    );
    return result.rows.map((row) => row.run_id as string);
  }

  /** Runs of a thread, or of every thread, with one of `statuses`. */
  async withStatus(threadId: string | null, statuses: RunStatus[]): Promise<Run[]> {
    const result = await this.pool.query(
      `SELECT ${COLUMNS} FROM graphx_runs r WHERE ($1::uuid IS NULL OR r.thread_id = $1) AND r.status = ANY($2)`,
      [threadId, statuses],
    );
    return result.rows.map(toQueuedRun);
  }

  /** Pending or running runs (background or streamed) of an assistant. */
  async activeForAssistant(assistantId: string): Promise<Run[]> {
    const result = await this.pool.query(
      `SELECT ${COLUMNS} FROM graphx_runs r WHERE r.assistant_id = $1 AND r.status IN ('pending', 'running')`,
      [assistantId],
    );
    return result.rows.map(toQueuedRun);
  }

  async delete(runId: string, threadId: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM graphx_runs WHERE run_id = $1 AND thread_id = $2', [runId, threadId]);
    return result.rowCount === 1;
  }
}
