/** Runs in PostgreSQL: thread runs are inserted when they start; finished runs are written in batches. */
import type { Pool } from 'pg';

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

/** A run record for the control plane's tracing project (docs/internal-contracts.md). */
export interface TraceRecord {
  run_id: string;
  thread_id: string | null;
  assistant_id: string;
  status: RunStatus;
  start_time: string;
  end_time: string;
  error: string | null;
  inputs: unknown;
  outputs: unknown;
}

const RUN_COLUMNS = 'run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at';

function toRun(row: Record<string, any>): Run {
  return { ...row, created_at: (row.created_at as Date).toISOString(), updated_at: (row.updated_at as Date).toISOString() } as Run;
}

export class RunStore {
  constructor(private readonly pool: Pool) {}

  async insert(run: Run): Promise<void> {
    await this.pool.query(
      `INSERT INTO graphx_runs (${RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [run.run_id, run.thread_id, run.assistant_id, run.status, run.metadata, run.kwargs, run.multitask_strategy, run.created_at, run.updated_at],
    );
  }

  async setStatus(runId: string, status: RunStatus): Promise<void> {
    await this.pool.query('UPDATE graphx_runs SET status = $2, updated_at = now() WHERE run_id = $1', [runId, status]);
  }

  async listForThread(threadId: string, limit: number, offset: number): Promise<Run[]> {
    const result = await this.pool.query(
      `SELECT ${RUN_COLUMNS} FROM graphx_runs WHERE thread_id = $1 ORDER BY created_at DESC LIMIT $2 OFFSET $3`,
      [threadId, limit, offset],
    );
    return result.rows.map(toRun);
  }

  /**
   * Writes finished runs and their trace records in one round trip (the outbox row commits with the run row, so a
   * record reaches the control plane even if this process dies right after).
   */
  async writeFinished(runs: Run[], traces: TraceRecord[]): Promise<void> {
    await this.pool.query(
      `WITH written_runs AS (
         INSERT INTO graphx_runs (${RUN_COLUMNS})
         SELECT ${RUN_COLUMNS} FROM jsonb_to_recordset($1::jsonb) AS r(run_id uuid, thread_id uuid, assistant_id text,
           status text, metadata jsonb, kwargs jsonb, multitask_strategy text, created_at timestamptz, updated_at timestamptz)
         ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
         RETURNING 1
       ), written_traces AS (
         INSERT INTO graphx_trace_outbox (run_id, record)
         SELECT (t ->> 'run_id')::uuid, t FROM jsonb_array_elements($2::jsonb) AS t
         ON CONFLICT (run_id) DO NOTHING RETURNING 1
       ) SELECT (SELECT count(*) FROM written_runs) AS runs, (SELECT count(*) FROM written_traces) AS traces`,
      [JSON.stringify(runs), JSON.stringify(traces)],
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
