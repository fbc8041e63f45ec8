/**
 * The busy mark of a thread as a lease: which run holds it, which runtime process (`busy_owner`) and until when
 * (`lease_expires_at`, pushed forward by the owner's heartbeat). A mark whose lease expired belongs to a process
 * that died mid-run, and the next run takes the thread over. `cancel_action` is another process's request to stop
 * the run (multitask `interrupt` or `rollback`), kept in the row so that a lost notification only delays it.
 */
import type { Pool } from 'pg';
import type { ContainmentFilter, ThreadStatus } from './threadStore';

export type CancelAction = 'interrupt' | 'rollback';

/** `created`: the claim made the thread. */
export type ClaimResult =
  | { kind: 'claimed'; takenOverRunId: string | null; created?: boolean }
  | { kind: 'busy'; busyRunId: string | null }
  | { kind: 'missing' };

export class ThreadLeases {
  constructor(
    private readonly pool: Pool,
    readonly owner: string,
    readonly leaseMs: number,
  ) {}

  /**
   * Marks the thread busy for `runId` unless a live lease holds it; creates the thread when missing and
   * `createWithMetadata` is given. `takenOverRunId` names a run whose owner's lease had expired. `likelyMissing`: the
   * caller found no thread a moment ago, so creating it is tried first (one statement instead of three), and the
   * usual way taken only when the id exists by now.
   */
  async claim(
    threadId: string,
    runId: string,
    filter: ContainmentFilter,
    graphMetadata: Record<string, unknown>,
    createWithMetadata: Record<string, unknown> | null,
    likelyMissing = false,
  ): Promise<ClaimResult> {
    if (likelyMissing && createWithMetadata && (await this.create(threadId, runId, graphMetadata, createWithMetadata))) {
      return { kind: 'claimed', takenOverRunId: null, created: true };
    }
    const claimed = await this.pool.query(
      `UPDATE graphx_threads t SET status = 'busy', updated_at = now(), metadata = t.metadata || $3, busy_run_id = $4,
              busy_owner = $5, lease_expires_at = now() + $6 * interval '1 millisecond', cancel_action = NULL
         FROM (SELECT thread_id, busy_run_id AS previous FROM graphx_threads WHERE thread_id = $1 FOR UPDATE) old
        WHERE t.thread_id = old.thread_id AND t.metadata @> $2
          AND (t.status <> 'busy' OR t.lease_expires_at IS NULL OR t.lease_expires_at < now())
        RETURNING old.previous, t.lease_expires_at`,
      [threadId, JSON.stringify(filter), JSON.stringify(graphMetadata), runId, this.owner, this.leaseMs],
    );
    if (claimed.rowCount === 1) {
      const previous = claimed.rows[0].previous as string | null;
      return { kind: 'claimed', takenOverRunId: previous && previous !== runId ? previous : null };
    }
    const existing = await this.pool.query('SELECT busy_run_id FROM graphx_threads WHERE thread_id = $1 AND metadata @> $2', [
      threadId,
      JSON.stringify(filter),
    ]);
    if (existing.rows[0]) return { kind: 'busy', busyRunId: existing.rows[0].busy_run_id };
    if (!createWithMetadata) return { kind: 'missing' };
    if (await this.create(threadId, runId, graphMetadata, createWithMetadata)) {
      return { kind: 'claimed', takenOverRunId: null, created: true };
    }
    // The id exists: created a moment ago by another request of the caller (busy), or a thread the caller may not see,
    // which answers exactly as a missing one (never a 409 that would tell another user's thread exists).
    const raced = await this.pool.query('SELECT 1 FROM graphx_threads WHERE thread_id = $1 AND metadata @> $2', [
      threadId,
      JSON.stringify(filter),
    ]);
    return raced.rowCount === 1 ? { kind: 'busy', busyRunId: null } : { kind: 'missing' };
  }

  /** Creates the thread busy for `runId`; false when the id exists. */
  private async create(
    threadId: string,
    runId: string,
    graphMetadata: Record<string, unknown>,
    createWithMetadata: Record<string, unknown>,
  ): Promise<boolean> {
    const created = await this.pool.query(
      `INSERT INTO graphx_threads (thread_id, metadata, status, busy_run_id, busy_owner, lease_expires_at)
       VALUES ($1, $2, 'busy', $3, $4, now() + $5 * interval '1 millisecond') ON CONFLICT (thread_id) DO NOTHING`,
      [threadId, JSON.stringify({ ...createWithMetadata, ...graphMetadata }), runId, this.owner, this.leaseMs],
    );
    return created.rowCount === 1;
  }

  /**
   * Asks the owner of `runId` to stop it; false when the run has ended (it neither waits in the queue nor holds the
   * thread). Two statements, in this order: the request is written on the queued run first, then on the thread. An
   * instance that has taken the run from the queue but not yet claimed the thread reads the run's request after its
   * claim (RunQueueStore.rememberStart): either that read sees the request, or the claim committed before the request
   * reached the thread and the thread's row carries it.
   */
  async requestCancel(threadId: string, runId: string, action: CancelAction): Promise<boolean> {
    const queued = await this.pool.query(
      `UPDATE graphx_runs SET cancel_action = CASE WHEN cancel_action = 'rollback' THEN cancel_action ELSE $2 END
        WHERE run_id = $1 AND background AND status IN ('pending', 'running')`,
      [runId, action],
    );
    const held = await this.pool.query(
      `UPDATE graphx_threads SET cancel_action = CASE WHEN cancel_action = 'rollback' THEN cancel_action ELSE $3 END
        WHERE thread_id = $1 AND busy_run_id = $2`,
      [threadId, runId, action],
    );
    return queued.rowCount === 1 || held.rowCount === 1;
  }

  /**
   * Extends the leases of `runIds` (this process's running thread runs) in one statement.
   * @returns per run still holding its thread, the cancel action requested for it (null: none); a run missing from
   * the map lost its thread.
   */
  async heartbeat(runIds: string[]): Promise<Map<string, CancelAction | null>> {
    const result = await this.pool.query(
      `UPDATE graphx_threads SET lease_expires_at = now() + $2 * interval '1 millisecond'
        WHERE busy_run_id = ANY($1::uuid[]) RETURNING busy_run_id, cancel_action`,
      [runIds, this.leaseMs],
    );
    return new Map(result.rows.map((row) => [row.busy_run_id as string, row.cancel_action as CancelAction | null]));
  }

  /** Ends `runId`'s hold on the thread (a no-op when another run took it over meanwhile). */
  async release(
    threadId: string,
    runId: string,
    outcome: { status: ThreadStatus; valuesJson: string | null; interrupts: Record<string, unknown>; error: string | null },
  ): Promise<void> {
    await this.pool.query(
      `UPDATE graphx_threads SET status = $3, "values" = COALESCE($4::jsonb, "values"), interrupts = $5, error = $6,
              state_updated_at = CASE WHEN $4::jsonb IS NULL THEN state_updated_at ELSE now() END,
              expires_at = CASE WHEN ttl_minutes IS NULL THEN NULL ELSE now() + ttl_minutes * interval '1 minute' END,
              updated_at = now(), busy_run_id = NULL, busy_owner = NULL, lease_expires_at = NULL, cancel_action = NULL
        WHERE thread_id = $1 AND busy_run_id = $2`,
      [threadId, runId, outcome.status, outcome.valuesJson, JSON.stringify(outcome.interrupts), outcome.error],
    );
  }
}
