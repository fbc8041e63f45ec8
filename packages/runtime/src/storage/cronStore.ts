/**
 * Crons in the deployment's database. Every read and write takes the caller's authorization filter (a JSONB
 * containment object on the cron's metadata, `{}` for none). `next_run_date` is the tick the cron fires next; the
 * scheduler (cronScheduler.ts) locks due rows with `FOR UPDATE SKIP LOCKED`, so one instance fires each tick.
 */
import type { Pool } from 'pg';
import { inTransaction } from './transaction';
import type { AuthUser } from '../auth/authUser';

export interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  user_id: string | null;
  schedule: string;
  timezone: string | null;
  end_time: string | null;
  enabled: boolean;
  on_run_completed: 'delete' | 'keep';
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  next_run_date: string | null;
  created_at: string;
  updated_at: string;
}

/** A due cron as the scheduler reads it: with the user its runs act as, and its tick as a Date. */
export interface DueCron extends Cron {
  auth_user: AuthUser | null;
  tick: Date;
}

export interface CronQuery {
  assistant_id?: string;
  thread_id?: string;
  enabled?: boolean;
  metadata?: Record<string, unknown> | null;
}

export interface CronPage extends CronQuery {
  limit: number;
  offset: number;
  sort_by: 'cron_id' | 'assistant_id' | 'thread_id' | 'created_at' | 'updated_at' | 'next_run_date' | 'end_time';
  sort_order: 'asc' | 'desc';
}

type Filter = Record<string, unknown>;

const COLUMNS = `cron_id, assistant_id, thread_id, user_id, schedule, timezone, end_time, enabled, on_run_completed,
  payload, metadata, next_run_date, created_at, updated_at`;

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : (value as string | null));

function toCron(row: Record<string, unknown>): Cron {
  const { auth_user: _authUser, ...cron } = row;
  return {
    ...(cron as unknown as Cron),
    end_time: iso(row.end_time),
    next_run_date: iso(row.next_run_date),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

function conditions(query: CronQuery, filter: Filter): { where: string; params: unknown[] } {
  const params: unknown[] = [JSON.stringify(filter)];
  const clauses = ['metadata @> $1::jsonb'];
  const add = (clause: (index: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(clause(`$${params.length}`));
  };
  if (query.assistant_id !== undefined) add((p) => `assistant_id = ${p}`, query.assistant_id);
  if (query.thread_id !== undefined) add((p) => `thread_id = ${p}::uuid`, query.thread_id);
  if (query.enabled !== undefined) add((p) => `enabled = ${p}`, query.enabled);
  if (query.metadata) add((p) => `metadata @> ${p}::jsonb`, JSON.stringify(query.metadata));
  return { where: clauses.join(' AND '), params };
}

/** The columns a create or a PATCH writes, and their values in that order (one list, so the two cannot drift). */
const WRITABLE_COLUMNS = [
  'user_id',
  'auth_user',
  'schedule',
  'timezone',
  'end_time',
  'enabled',
  'on_run_completed',
  'payload',
  'metadata',
  'next_run_date',
] as const;

function writableValues(cron: Cron, authUser: AuthUser | null): unknown[] {
  return [
    cron.user_id,
    authUser ? JSON.stringify(authUser) : null,
    cron.schedule,
    cron.timezone,
    cron.end_time,
    cron.enabled,
    cron.on_run_completed,
    JSON.stringify(cron.payload),
    JSON.stringify(cron.metadata),
    cron.next_run_date,
  ];
}

export class CronStore {
  /** Called after a cron was created or changed (the scheduler wakes, and tells the other instances). */
  onChanged: () => void = () => undefined;

  constructor(private readonly pool: Pool) {}

  async insert(cron: Cron, authUser: AuthUser | null): Promise<Cron> {
    const values = [cron.cron_id, cron.assistant_id, cron.thread_id, ...writableValues(cron, authUser)];
    const result = await this.pool.query(
      `INSERT INTO graphx_crons (cron_id, assistant_id, thread_id, ${WRITABLE_COLUMNS.join(', ')})
       VALUES (${values.map((_, index) => `$${index + 1}`).join(', ')}) RETURNING ${COLUMNS}`,
      values,
    );
    this.onChanged();
    return toCron(result.rows[0]);
  }

  async get(cronId: string, filter: Filter): Promise<Cron | null> {
    const result = await this.pool.query(`SELECT ${COLUMNS} FROM graphx_crons WHERE cron_id = $1 AND metadata @> $2::jsonb`, [
      cronId,
      JSON.stringify(filter),
    ]);
    return result.rows[0] ? toCron(result.rows[0]) : null;
  }

  /**
   * Writes the fields a PATCH changed (already merged into `cron`) and makes `authUser` the user its runs act as;
   * null when the cron is outside the filter.
   */
  async update(cron: Cron, filter: Filter, authUser: AuthUser | null): Promise<Cron | null> {
    const assignments = WRITABLE_COLUMNS.map((column, index) => `${column} = $${index + 3}`).join(', ');
    const result = await this.pool.query(
      `UPDATE graphx_crons SET ${assignments}, updated_at = now()
        WHERE cron_id = $1 AND metadata @> $2::jsonb RETURNING ${COLUMNS}`,
      [cron.cron_id, JSON.stringify(filter), ...writableValues(cron, authUser)],
    );
    if (result.rows[0]) this.onChanged();
    return result.rows[0] ? toCron(result.rows[0]) : null;
  }

  async delete(cronId: string, filter: Filter): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM graphx_crons WHERE cron_id = $1 AND metadata @> $2::jsonb', [
      cronId,
      JSON.stringify(filter),
    ]);
    return result.rowCount === 1;
  }

  async deleteForThread(threadId: string): Promise<void> {
    await this.pool.query('DELETE FROM graphx_crons WHERE thread_id = $1', [threadId]);
  }

  async search(page: CronPage, filter: Filter): Promise<Cron[]> {
    const { where, params } = conditions(page, filter);
    // sort_by and sort_order are validated enums: safe to splice.
    const result = await this.pool.query(
      `SELECT ${COLUMNS} FROM graphx_crons WHERE ${where}
        ORDER BY ${page.sort_by} ${page.sort_order} NULLS LAST, cron_id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return result.rows.map(toCron);
  }

  async count(query: CronQuery, filter: Filter): Promise<number> {
    const { where, params } = conditions(query, filter);
    const result = await this.pool.query(`SELECT count(*)::int AS count FROM graphx_crons WHERE ${where}`, params);
    return result.rows[0].count as number;
  }

  /** Milliseconds until the next enabled cron is due by the database's clock (≤ 0: due now); null when none is. */
  async msUntilNextDue(): Promise<number | null> {
    const result = await this.pool.query(
      `SELECT EXTRACT(EPOCH FROM (min(next_run_date) - now())) * 1000 AS ms FROM graphx_crons WHERE enabled`,
    );
    const ms = result.rows[0]?.ms as string | number | null | undefined;
    return ms === null || ms === undefined ? null : Number(ms);
  }

  /**
   * Runs `fire` for each due cron under a row lock held until `fire` and the move to `nextRunDate(cron)` commit
   * together: another instance skips the locked rows and then sees the tick moved on.
   */
  async fireDue(
    limit: number,
    fire: (cron: DueCron) => Promise<void>,
    nextRunDate: (cron: DueCron) => Date | null,
  ): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      const due = await client.query(
        `SELECT ${COLUMNS}, auth_user FROM graphx_crons WHERE enabled AND next_run_date <= now()
          ORDER BY next_run_date LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      for (const row of due.rows) {
        const cron: DueCron = { ...toCron(row), auth_user: row.auth_user as AuthUser | null, tick: row.next_run_date as Date };
        await fire(cron);
        await client.query('UPDATE graphx_crons SET next_run_date = $2 WHERE cron_id = $1', [cron.cron_id, nextRunDate(cron)]);
      }
      return due.rowCount ?? 0;
    });
  }
}
