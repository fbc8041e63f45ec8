/**
 * `GET /threads/{id}/storage` (the Python server's): the bytes a thread's checkpoints occupy in the checkpointer's
 * tables, as stored — the checkpoints themselves (with their metadata), the channel values per channel, the writes
 * kept beside them — so an operator sees which thread, and which channel of it, grows (then prune or a TTL).
 */
import type { Pool } from 'pg';

export interface ThreadStorage {
  thread_id: string;
  checkpoints: { count: number; bytes: number };
  channel_values: { bytes: number; channels: Record<string, number> };
  pending_writes: { count: number; bytes: number };
  total_bytes: number;
}

export async function threadStorage(pool: Pool, threadId: string): Promise<ThreadStorage> {
  const [checkpoints, blobs, writes] = await Promise.all([
    pool.query(
      `SELECT count(*)::int AS count, coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)::bigint AS bytes
         FROM checkpoints WHERE thread_id = $1`,
      [threadId],
    ),
    pool.query(
      `SELECT channel, coalesce(sum(octet_length(blob)), 0)::bigint AS bytes FROM checkpoint_blobs WHERE thread_id = $1
        GROUP BY channel ORDER BY channel`,
      [threadId],
    ),
    pool.query(
      `SELECT count(*)::int AS count, coalesce(sum(octet_length(blob)), 0)::bigint AS bytes FROM checkpoint_writes
        WHERE thread_id = $1`,
      [threadId],
    ),
  ]);
  const channels = Object.fromEntries(blobs.rows.map((row) => [row.channel as string, Number(row.bytes)]));
  const valueBytes = Object.values(channels).reduce((sum, bytes) => sum + bytes, 0);
  const checkpointBytes = Number(checkpoints.rows[0].bytes);
  const writeBytes = Number(writes.rows[0].bytes);
  return {
    thread_id: threadId,
    checkpoints: { count: checkpoints.rows[0].count, bytes: checkpointBytes },
    channel_values: { bytes: valueBytes, channels },
    pending_writes: { count: writes.rows[0].count, bytes: writeBytes },
    total_bytes: checkpointBytes + valueBytes + writeBytes,
  };
}
