/** Runs in PostgreSQL: thread runs are inserted when they start; finished runs are written in batches. */
import type { RunRecord } from '@graphx/contract/runRecord';
import type { Pool } from 'pg';
import { inTransaction } from './transaction';

export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'interrupted' | 'timeout';

export interface Run {
  run_id: string;
  thread_id: string | null;
  assistant_id: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  multitask_strategy: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Who created a run, recorded with it (columns `auth_identity`, `auth_scope`): the authenticated user's identity (null
 * without one) and the filter the app's `threads:create_run` handler returned for them. A run on a thread is read
 * through its thread; a threadless run is visible to a reader whose filter the run's metadata (which the handler may
 * have stamped) with its scope over it contains (runQueueStore.ts `VISIBLE_RUN`).
 */
export interface RunOwner {
  identity: string | null;
  scope: Record<string, unknown>;
}

/** A run with its owner, as written (the owner is never part of a run answered to a client). */
export interface OwnedRun {
  run: Run;
  owner: RunOwner;
}

/** The fields of a run answered to clients, whatever else the object carries (a queued run's config, its attempt). */
export function runFields(run: Run): Run {
  const { run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at } = run;
  return { run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at };
}

/** A run record for the control plane's tracing project (`@graphx/contract/runRecord`). */
export type TraceRecord = RunRecord;

const RUN_COLUMNS = 'run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at';

function toRun(row: Record<string, any>): Run {
  return {
    ...row,
    created_at: (row.created_at as Date).toISOString(),
    updated_at: (row.updated_at as Date).toISOString(),
  } as Run;
}

export class RunStore {
  constructor(private readonly pool: Pool) {}

  async insert({ run, owner }: OwnedRun): Promise<void> {
    await this.pool.query(
      `INSERT INTO graphx_runs (${RUN_COLUMNS}, auth_identity, auth_scope) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        run.run_id,
        run.thread_id,
        run.assistant_id,
        run.status,
        run.metadata,
        run.kwargs,
        run.multitask_strategy,
        run.created_at,
        run.updated_at,
        owner.identity,
        JSON.stringify(owner.scope),
      ],
    );
  }

  async setStatus(runId: string, status: RunStatus): Promise<void> {
    await this.pool.query('UPDATE graphx_runs SET status = $2, updated_at = now() WHERE run_id = $1', [runId, status]);
  }

  /** Ends a run that is still pending or running (one whose process died) with `status`. */
  async setStatusIfRunning(runId: string, status: RunStatus): Promise<void> {
    await this.pool.query(
      `UPDATE graphx_runs SET status = $2, updated_at = now() WHERE run_id = $1 AND status IN ('pending', 'running')`,
      [runId, status],
    );
  }

  /**
   * The newest checkpoint id of a thread (null: none). Taken when a run gets the thread: checkpoint ids are uuid6,
   * ordered by time, and the run holds the thread alone, so every newer checkpoint is the run's own.
   */
  /** The thread a run is on (null: threadless or unknown), for lookups by run id alone (A2A `tasks/get`). */
  async threadOf(runId: string): Promise<string | null> {
    const result = await this.pool.query('SELECT thread_id FROM graphx_runs WHERE run_id = $1', [runId]);
    return (result.rows[0]?.thread_id as string | null | undefined) ?? null;
  }

  async latestCheckpointId(threadId: string): Promise<string | null> {
    const result = await this.pool.query('SELECT max(checkpoint_id) AS id FROM checkpoints WHERE thread_id = $1', [threadId]);
    return result.rows[0]?.id ?? null;
  }

  /**
   * Rollback: deletes the run and every checkpoint newer than `since` (see latestCheckpointId), with their pending
   * writes and the channel values no remaining checkpoint refers to (versions are small integers that the next run
   * writes again, so a stale blob would be read as the new value), in one transaction.
   */
  async deleteRunAndCheckpoints(threadId: string, runId: string, since: string | null): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `WITH gone AS (DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_id > COALESCE($2, '')
                        RETURNING checkpoint_ns, checkpoint_id)
         DELETE FROM checkpoint_writes w USING gone
          WHERE w.thread_id = $1 AND w.checkpoint_ns = gone.checkpoint_ns AND w.checkpoint_id = gone.checkpoint_id`,
        [threadId, since],
      );
      await client.query(
        `DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
           SELECT 1 FROM checkpoints c, jsonb_each_text(c.checkpoint -> 'channel_versions') v
            WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND v.key = b.channel AND v.value = b.version)`,
        [threadId],
      );
      await client.query('DELETE FROM graphx_runs WHERE run_id = $1', [runId]);
    });
  }

  async listForThread(threadId: string, limit: number, offset: number, status: RunStatus | null = null): Promise<Run[]> {
    const result = await this.pool.query(
      `SELECT ${RUN_COLUMNS} FROM graphx_runs WHERE thread_id = $1 AND ($4::text IS NULL OR status = $4)
        ORDER BY created_at DESC LIMIT $2 OFFSET $3`,
      [threadId, limit, offset, status],
    );
    return result.rows.map(toRun);
  }

  /**
   * Writes finished runs and their trace records in one round trip (the outbox row commits with the run row, so a
   * record reaches the control plane even if this process dies right after).
   */
  async writeFinished(runs: OwnedRun[], traces: TraceRecord[]): Promise<void> {
    const rows = runs.map(({ run, owner }) => ({ ...runFields(run), auth_identity: owner.identity, auth_scope: owner.scope }));
    await this.pool.query(
      `WITH written_runs AS (
         INSERT INTO graphx_runs (${RUN_COLUMNS}, auth_identity, auth_scope)
         SELECT ${RUN_COLUMNS}, auth_identity, auth_scope FROM jsonb_to_recordset($1::jsonb) AS r(run_id uuid,
           thread_id uuid, assistant_id text, status text, metadata jsonb, kwargs jsonb, multitask_strategy text,
           created_at timestamptz, updated_at timestamptz, auth_identity text, auth_scope jsonb)
         -- A queued run's row exists since it was queued, with its owner: only its end is written.
         ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
         RETURNING 1
       ), written_traces AS (
         INSERT INTO graphx_trace_outbox (run_id, record)
         SELECT (t ->> 'run_id')::uuid, t FROM jsonb_array_elements($2::jsonb) AS t
         ON CONFLICT (run_id) DO NOTHING RETURNING 1
       ) SELECT (SELECT count(*) FROM written_runs) AS runs, (SELECT count(*) FROM written_traces) AS traces`,
      [JSON.stringify(rows), JSON.stringify(traces)],
    );
  }

  /** Claims up to `limit` undelivered trace records for 30 s (another instance skips them meanwhile). */
  async claimTraces(limit: number): Promise<TraceRecord[]> {
    const result = await this.pool.query(
      `UPDATE graphx_trace_outbox SET claimed_until = now() + interval '30 seconds'
        WHERE run_id IN (SELECT run_id FROM graphx_trace_outbox WHERE claimed_until < now()
                          ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING record`,
      [limit],
    );
    return result.rows.map((row) => row.record as TraceRecord);
  }

  async deleteTraces(runIds: string[]): Promise<void> {
    await this.pool.query('DELETE FROM graphx_trace_outbox WHERE run_id = ANY($1::uuid[])', [runIds]);
  }

  /** Makes claimed records available again at once (after a failed delivery). */
  async releaseTraces(runIds: string[]): Promise<void> {
    await this.pool.query(`UPDATE graphx_trace_outbox SET claimed_until = '-infinity' WHERE run_id = ANY($1::uuid[])`, [runIds]);
  }
}
