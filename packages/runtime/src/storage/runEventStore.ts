/**
 * The events of joinable runs (background runs, and runs streamed on a thread) in the deployment's database, so a
 * join stream or a thread stream on any instance sees them: each batch is written in one statement that also
 * notifies every instance (`graphx_runtime`, type `events`), so a joiner elsewhere reads it at once. A run's events
 * are numbered per run (`seq`, the `id:` of run join streams); the row id orders a thread's events (the `id:` of
 * thread streams). A row with event END_EVENT marks the end of one execution of the run. Rows outlive their run by
 * RETENTION_MS, then the sweep drops them. The data column is `json`, not jsonb: it keeps the wire JSON as written, so an
 * event read back (a resumed stream, another instance) is the text a follower on the writing instance was handed, and
 * nothing queries inside it.
 */
import type { Pool } from 'pg';

export const END_EVENT = 'graphx:end';
const CHANNEL = 'graphx_runtime';

export interface StoredRunEvent {
  /** Row id: the thread stream's event id. */
  readonly id: string;
  readonly runId: string | null;
  readonly seq: number;
  readonly event: string;
  readonly data: unknown;
  /** The data's wire JSON as this instance wrote it (a row handed over, not read back): the row's text. */
  readonly json?: string;
}

export interface EventToStore {
  seq: number;
  event: string;
  /** The data as wire JSON (serialize.ts), stored as it is. */
  json: string;
}

/** Orders two row ids (decimal strings without leading zeros) as numbers. */
export function compareRowIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A row a write made, as a read of it would give it (the column keeps the text as written: the same keys in the same
 * order), with that text beside it. The data is parsed when first read, once for every follower: a row no follower
 * reads (a channel none subscribed to), or one a follower sends as written (protocol/wireEvents.ts), is never parsed.
 */
class WrittenRow implements StoredRunEvent {
  private parsed: { value: unknown } | null = null;

  constructor(
    readonly id: string,
    readonly runId: string | null,
    readonly seq: number,
    readonly event: string,
    readonly json: string,
  ) {}

  get data(): unknown {
    this.parsed ??= { value: JSON.parse(this.json) };
    return this.parsed.value;
  }
}

/** The rows a write made (`written`: what append answered), see WrittenRow. */
export function writtenRows(
  runId: string | null,
  events: EventToStore[],
  written: Array<{ id: string; seq: number }>,
): StoredRunEvent[] {
  const bySeq = new Map(events.map((item) => [item.seq, item]));
  return written.flatMap(({ id, seq }) => {
    const item = bySeq.get(seq);
    return item ? [new WrittenRow(id, runId, seq, item.event, item.json)] : [];
  });
}

function toStored(row: Record<string, any>): StoredRunEvent {
  return { id: String(row.id), runId: row.run_id, seq: row.seq, event: row.event, data: row.data };
}

export class RunEventStore {
  /** `origin`: this instance's id, sent with each notification so that the instance that wrote ignores its own. */
  constructor(
    private readonly pool: Pool,
    private readonly origin: string,
  ) {}

  /**
   * Appends a run's events (a repeated seq is ignored: a run taken over writes on after the last one kept).
   * @returns the rows written, with the ids the database gave them (a repeated seq is not among them).
   */
  async append(
    runId: string | null,
    threadId: string | null,
    events: EventToStore[],
  ): Promise<Array<{ id: string; seq: number }>> {
    // Built by hand: the data is already wire JSON, parsing it to build an object for JSON.stringify would double the cost.
    const rows = events.map((item) => `{"seq":${item.seq},"event":${JSON.stringify(item.event)},"data":${item.json}}`);
    // The notification goes out whatever was written (the one-row side of the join), and at commit.
    const result = await this.pool.query(
      `WITH written AS (
         INSERT INTO graphx_run_events (run_id, thread_id, seq, event, data)
         SELECT $1::uuid, $2::uuid, r.seq, r.event, r.data FROM json_to_recordset($3::json) AS r(seq int, event text, data json)
         ON CONFLICT DO NOTHING RETURNING id, seq)
       SELECT w.id, w.seq FROM (SELECT pg_notify('${CHANNEL}', $4)) AS n LEFT JOIN written w ON true`,
      [
        runId,
        threadId,
        `[${rows.join(',')}]`,
        JSON.stringify({ type: 'events', run_id: runId, thread_id: threadId, origin: this.origin }),
      ],
    );
    return result.rows.filter((row) => row.id !== null).map((row) => ({ id: String(row.id), seq: Number(row.seq) }));
  }

  /** The run's events with seq ≥ `fromSeq`, oldest first. */
  async forRun(runId: string, fromSeq: number, limit = 500): Promise<StoredRunEvent[]> {
    const result = await this.pool.query(
      `SELECT id, run_id, seq, event, data FROM graphx_run_events WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
      [runId, fromSeq, limit],
    );
    return result.rows.map(toStored);
  }

  /** The next seq of a run (0 when it has none): where an execution taking over the run numbers on. */
  async nextSeq(runId: string): Promise<number> {
    const result = await this.pool.query('SELECT max(seq) AS seq FROM graphx_run_events WHERE run_id = $1', [runId]);
    return result.rows[0]?.seq === null || result.rows[0]?.seq === undefined ? 0 : Number(result.rows[0].seq) + 1;
  }

  /** The thread's events after row id `afterId`, oldest first. */
  async forThread(threadId: string, afterId: string, limit = 500): Promise<StoredRunEvent[]> {
    const result = await this.pool.query(
      `SELECT id, run_id, seq, event, data FROM graphx_run_events WHERE thread_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [threadId, afterId, limit],
    );
    return result.rows.map(toStored);
  }

  /** The newest row id of the thread's events ('0' when none): a thread stream without Last-Event-ID starts there. */
  async lastThreadEventId(threadId: string): Promise<string> {
    const result = await this.pool.query('SELECT max(id) AS id FROM graphx_run_events WHERE thread_id = $1', [threadId]);
    return String(result.rows[0]?.id ?? '0');
  }

  /** The row id just before the first kept event of the thread's latest run ('0' when none): where a follower of the
   * thread that names no position starts, so it sees the run going on (or the last one) whole and nothing older. */
  async beforeLatestRun(threadId: string): Promise<string> {
    const result = await this.pool.query(
      `SELECT min(id) - 1 AS id FROM graphx_run_events WHERE thread_id = $1 AND run_id =
         (SELECT run_id FROM graphx_run_events WHERE thread_id = $1 AND run_id IS NOT NULL ORDER BY id DESC LIMIT 1)`,
      [threadId],
    );
    return String(result.rows[0]?.id ?? '0');
  }

  /** Drops the events of runs that ended (or vanished) more than `retentionMs` ago. */
  async sweep(retentionMs: number): Promise<void> {
    await this.pool.query(
      `DELETE FROM graphx_run_events e WHERE e.created_at < now() - $1 * interval '1 millisecond' AND NOT EXISTS (
         SELECT 1 FROM graphx_runs r WHERE r.run_id = e.run_id
            AND (r.status IN ('pending', 'running') OR r.updated_at > now() - $1 * interval '1 millisecond'))`,
      [retentionMs],
    );
  }
}
