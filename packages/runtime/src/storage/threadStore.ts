/**
 * Threads in PostgreSQL. Every read and write takes the caller's authorization filter (a JSONB containment object,
 * see auth/authorization.ts), so a thread outside it behaves exactly like a missing one.
 */
import crypto from 'node:crypto';
import type { Pool } from 'pg';
import { ConflictError } from '@graphx/kit/errors';
import { inTransaction } from './transaction';

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  config: Record<string, unknown>;
  values: unknown;
  interrupts: Record<string, unknown>;
  error?: string | null;
}

/** A thread's time to live (the Python server's `ttl`): minutes after its last run, then deleted or pruned. */
export interface ThreadTtl {
  strategy: 'delete' | 'keep_latest';
  ttl: number;
}

export interface ThreadQuery {
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
  status?: ThreadStatus;
  ids?: string[];
  limit: number;
  offset: number;
  sortBy: 'thread_id' | 'status' | 'created_at' | 'updated_at' | 'state_updated_at';
  sortOrder: 'asc' | 'desc';
}

/** An authorization filter as a JSONB containment object; `{}` matches every thread. */
export type ContainmentFilter = Record<string, unknown>;

const COLUMNS = 'thread_id, created_at, updated_at, metadata, status, config, "values", interrupts, error';

function toThread(row: Record<string, any>): Thread {
  return {
    thread_id: row.thread_id,
    created_at: (row.created_at as Date).toISOString(),
    updated_at: (row.updated_at as Date).toISOString(),
    metadata: row.metadata,
    status: row.status,
    config: row.config,
    values: row.values ?? null,
    interrupts: row.interrupts,
    error: row.error ?? null,
  };
}

/** Builds the WHERE clause of a search: every condition ANDed, the auth filter always included. */
function searchConditions(query: Omit<ThreadQuery, 'limit' | 'offset' | 'sortBy' | 'sortOrder'>, filter: ContainmentFilter) {
  const conditions = ['metadata @> $1'];
  const params: unknown[] = [JSON.stringify(filter)];
  if (query.metadata && Object.keys(query.metadata).length > 0) {
    params.push(JSON.stringify(query.metadata));
    conditions.push(`metadata @> $${params.length}`);
  }
  if (query.values && Object.keys(query.values).length > 0) {
    params.push(JSON.stringify(query.values));
    conditions.push(`"values" @> $${params.length}`);
  }
  if (query.status) {
    params.push(query.status);
    conditions.push(`status = $${params.length}`);
  }
  if (query.ids) {
    params.push(query.ids);
    conditions.push(`thread_id = ANY($${params.length}::uuid[])`);
  }
  return { where: conditions.join(' AND '), params };
}

export class ThreadStore {
  constructor(private readonly pool: Pool) {}

  /** Creates a thread; an existing id is a conflict unless `ifExists` is `do_nothing` and the caller may see it. */
  async create(
    input: { threadId?: string; metadata: Record<string, unknown>; ifExists: 'raise' | 'do_nothing' },
    filter: ContainmentFilter,
  ): Promise<Thread> {
    const threadId = input.threadId ?? crypto.randomUUID();
    const inserted = await this.pool.query(
      `INSERT INTO graphx_threads (thread_id, metadata) VALUES ($1, $2) ON CONFLICT (thread_id) DO NOTHING RETURNING ${COLUMNS}`,
      [threadId, JSON.stringify(input.metadata)],
    );
    if (inserted.rows[0]) return toThread(inserted.rows[0]);
    const existing = input.ifExists === 'do_nothing' ? await this.get(threadId, filter) : null;
    if (!existing) throw new ConflictError(`Thread with ID ${threadId} already exists.`);
    return existing;
  }

  async get(threadId: string, filter: ContainmentFilter): Promise<Thread | null> {
    const result = await this.pool.query(`SELECT ${COLUMNS} FROM graphx_threads WHERE thread_id = $1 AND metadata @> $2`, [
      threadId,
      JSON.stringify(filter),
    ]);
    return result.rows[0] ? toThread(result.rows[0]) : null;
  }

  /**
   * Whether the thread exists, whether `filter` lets the caller see it, and its status, in one light query (no values):
   * what a protocol stream or command needs before it reads events or starts a run.
   */
  async visibility(threadId: string, filter: ContainmentFilter): Promise<{ visible: boolean; status: ThreadStatus } | null> {
    const result = await this.pool.query('SELECT status, metadata @> $2 AS visible FROM graphx_threads WHERE thread_id = $1', [
      threadId,
      JSON.stringify(filter),
    ]);
    const row = result.rows[0];
    return row ? { visible: row.visible === true, status: row.status as ThreadStatus } : null;
  }

  /** Merges `metadata` into the thread's metadata. */
  async patchMetadata(threadId: string, metadata: Record<string, unknown>, filter: ContainmentFilter): Promise<Thread | null> {
    const result = await this.pool.query(
      `UPDATE graphx_threads SET metadata = metadata || $3, updated_at = now()
        WHERE thread_id = $1 AND metadata @> $2 RETURNING ${COLUMNS}`,
      [threadId, JSON.stringify(filter), JSON.stringify(metadata)],
    );
    return result.rows[0] ? toThread(result.rows[0]) : null;
  }

  /** Deletes the thread and its runs; null when no visible thread has that id, else the run that held it busy. */
  async delete(threadId: string, filter: ContainmentFilter): Promise<{ busyRunId: string | null } | null> {
    const result = await this.pool.query(
      'DELETE FROM graphx_threads WHERE thread_id = $1 AND metadata @> $2 RETURNING busy_run_id',
      [threadId, JSON.stringify(filter)],
    );
    if (result.rowCount === 0) return null;
    await this.pool.query('DELETE FROM graphx_runs WHERE thread_id = $1', [threadId]);
    return { busyRunId: (result.rows[0].busy_run_id as string | null) ?? null };
  }

  async search(query: ThreadQuery, filter: ContainmentFilter): Promise<{ threads: Thread[]; total: number }> {
    const { where, params } = searchConditions(query, filter);
    // sortBy and sortOrder are validated enums, so interpolating them is safe.
    const result = await this.pool.query(
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM graphx_threads WHERE ${where}
        ORDER BY ${query.sortBy} ${query.sortOrder} NULLS LAST, thread_id LIMIT ${query.limit} OFFSET ${query.offset}`,
      params,
    );
    return { threads: result.rows.map(toThread), total: Number(result.rows[0]?.total ?? 0) };
  }

  async count(query: Omit<ThreadQuery, 'limit' | 'offset' | 'sortBy' | 'sortOrder'>, filter: ContainmentFilter): Promise<number> {
    const { where, params } = searchConditions(query, filter);
    const result = await this.pool.query(`SELECT count(*)::int AS count FROM graphx_threads WHERE ${where}`, params);
    return result.rows[0].count;
  }

  /**
   * Copies a thread with its whole checkpoint history under a new id, in one transaction (the copy is idle; its
   * metadata gets `thread_id` of the copy, as the anchor's copy does). Null when no visible thread has that id.
   */
  async copy(threadId: string, filter: ContainmentFilter): Promise<Thread | null> {
    const copyId = crypto.randomUUID();
    return inTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        `INSERT INTO graphx_threads (thread_id, metadata, config, "values", interrupts, status)
         SELECT $3::uuid, metadata || jsonb_build_object('thread_id', $3::text), config, "values", interrupts,
                CASE WHEN status = 'busy' THEN 'idle' ELSE status END
           FROM graphx_threads WHERE thread_id = $1 AND metadata @> $2 RETURNING ${COLUMNS}`,
        [threadId, JSON.stringify(filter), copyId],
      );
      // Nothing written yet: committing the empty transaction is the same as rolling it back.
      if (!inserted.rows[0]) return null;
      await client.query(
        `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
           FROM checkpoints WHERE thread_id = $1`,
        [threadId, copyId],
      );
      await client.query(
        `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
         SELECT $2, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1`,
        [threadId, copyId],
      );
      await client.query(
        `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
         SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes WHERE thread_id = $1`,
        [threadId, copyId],
      );
      return toThread(inserted.rows[0]);
    });
  }

  /**
   * Sets (or with null removes) the thread's TTL: it expires `ttl` minutes from now, and every run pushes that back.
   * @returns false when the thread is missing or outside the filter.
   */
  async setTtl(threadId: string, ttl: ThreadTtl | null, filter: ContainmentFilter): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE graphx_threads SET ttl_strategy = $3, ttl_minutes = $4::float8,
              expires_at = CASE WHEN $4::float8 IS NULL THEN NULL ELSE now() + $4::float8 * interval '1 minute' END
        WHERE thread_id = $1 AND metadata @> $2`,
      [threadId, JSON.stringify(filter), ttl?.strategy ?? null, ttl?.ttl ?? null],
    );
    return (result.rowCount ?? 0) > 0;
  }

  /** The thread's TTL as `GET /threads/{id}?include=ttl` shows it (null without one). */
  async ttlOf(threadId: string): Promise<{ strategy: string; ttl_minutes: number; expires_at: string | null } | null> {
    const result = await this.pool.query(
      'SELECT ttl_strategy, ttl_minutes, expires_at FROM graphx_threads WHERE thread_id = $1',
      [threadId],
    );
    const row = result.rows[0];
    if (!row || row.ttl_minutes === null) return null;
    return {
      strategy: row.ttl_strategy,
      ttl_minutes: row.ttl_minutes,
      expires_at: row.expires_at ? (row.expires_at as Date).toISOString() : null,
    };
  }

  /**
   * Takes up to `limit` expired threads that no run holds: their expiry is cleared in the same statement, so one
   * instance acts on each (a `keep_latest` thread expires again after its next run).
   */
  async takeExpired(limit: number): Promise<Array<{ threadId: string; strategy: string }>> {
    const result = await this.pool.query(
      `UPDATE graphx_threads SET expires_at = NULL WHERE thread_id IN (
         SELECT thread_id FROM graphx_threads WHERE expires_at < now() AND status <> 'busy'
          ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING thread_id, ttl_strategy`,
      [limit],
    );
    return result.rows.map((row) => ({ threadId: row.thread_id, strategy: row.ttl_strategy }));
  }

  /** Stores the thread's values and interrupts after a state update made outside a run. */
  async setState(threadId: string, valuesJson: string, interrupts: Record<string, unknown>, status: ThreadStatus): Promise<void> {
    await this.pool.query(
      `UPDATE graphx_threads SET "values" = $2::jsonb, interrupts = $3, status = $4, updated_at = now(), state_updated_at = now()
        WHERE thread_id = $1`,
      [threadId, valuesJson, JSON.stringify(interrupts), status],
    );
  }
}
