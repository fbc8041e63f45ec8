/**
 * `POST /threads/prune` with `keep_latest`: a thread keeps only its newest checkpoint (per namespace, so subgraph
 * state survives too), the writes of that checkpoint, and the channel blobs it refers to. Checkpoint ids are
 * time-ordered (uuid6), so the newest is the greatest.
 */
import type { Pool } from 'pg';
import { inTransaction } from './transaction';

export async function keepLatestCheckpoint(pool: Pool, threadId: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(
      `DELETE FROM checkpoints c USING (
         SELECT checkpoint_ns, max(checkpoint_id) AS newest FROM checkpoints WHERE thread_id = $1 GROUP BY checkpoint_ns) n
        WHERE c.thread_id = $1 AND c.checkpoint_ns = n.checkpoint_ns AND c.checkpoint_id <> n.newest`,
      [threadId],
    );
    await client.query(
      `DELETE FROM checkpoint_writes w WHERE w.thread_id = $1 AND NOT EXISTS (
         SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
            AND c.checkpoint_id = w.checkpoint_id)`,
      [threadId],
    );
    await client.query(
      `DELETE FROM checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
         SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
            AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)`,
      [threadId],
    );
  });
}
