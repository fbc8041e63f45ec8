/**
 * A checkpoint, or a task's writes, in one SQL statement each. The PostgreSQL saver of
 * `@langchain/langgraph-checkpoint-postgres` sends `BEGIN`, one `INSERT` per channel blob or per write, the
 * checkpoint's `INSERT` and `COMMIT`, each a round trip of its own: 32 statements for a two-node run on a thread. Here
 * the same rows go in one statement (the blobs as a data-modifying `WITH` beside the checkpoint's upsert), which
 * PostgreSQL applies atomically as the transaction did. Same tables, columns, conflict rules and parameter values
 * as the library's statements (its sql.js, version 1.0): only the number of round trips changes.
 */

/** The saver's tables in the schema it is made with (graphx makes it with the default, `public`). */
const TABLES = {
  checkpoints: '"public".checkpoints',
  blobs: '"public".checkpoint_blobs',
  writes: '"public".checkpoint_writes',
};

/**
 * A statement carries at most 65535 parameters (the protocol's 16-bit count): beyond these many rows the saver
 * falls back to the library's statement per row (a fan-out of thousands of `Send`s is the realistic case).
 */
export const MAX_BLOB_ROWS = Math.floor((65535 - 6) / 6);
export const MAX_WRITE_ROWS = Math.floor(65535 / 8);

export type BlobRow = [string, string, string, string, string, Uint8Array | undefined];
export type WriteRow = [string, string, string, string, number, string, string, Uint8Array];

/** `($1, $2, …), (…)` for `rows` of `width` parameters numbered from `offset + 1`. */
function valuesList(rows: number, width: number, offset: number): string {
  return Array.from(
    { length: rows },
    (_, row) => `(${Array.from({ length: width }, (__, column) => `$${offset + row * width + column + 1}`).join(', ')})`,
  ).join(', ');
}

/** The statement and parameters that store one checkpoint (`checkpoint` row parameters first) and its new blobs. */
export function checkpointStatement(checkpointRow: unknown[], blobs: BlobRow[]): { text: string; values: unknown[] } {
  const upsert = `INSERT INTO ${TABLES.checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
  VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
  DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;
  if (blobs.length === 0) return { text: upsert, values: checkpointRow };
  const text = `WITH blobs AS (
  INSERT INTO ${TABLES.blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
  VALUES ${valuesList(blobs.length, 6, checkpointRow.length)}
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
${upsert}`;
  return { text, values: [...checkpointRow, ...blobs.flat()] };
}

/**
 * The statement that stores one task's writes, or null when there are none. As the library: writes of special
 * channels only (negative indexes: error, interrupt, resume, scheduled) replace earlier ones, any other batch is
 * inserted without replacing. One statement cannot touch a row twice, so a key given twice keeps the row the
 * library's one-by-one statements would have left: the last for a replacing batch, the first otherwise.
 */
export function writesStatement(rows: WriteRow[]): { text: string; values: unknown[] } | null {
  if (rows.length === 0) return null;
  const replacing = rows.every((row) => row[4] < 0);
  const byIndex = new Map<number, WriteRow>();
  for (const row of rows) if (replacing || !byIndex.has(row[4])) byIndex.set(row[4], row);
  const kept = [...byIndex.values()];
  const onConflict = replacing
    ? 'DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob'
    : 'DO NOTHING';
  const text = `INSERT INTO ${TABLES.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
  VALUES ${valuesList(kept.length, 8, 0)}
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`;
  return { text, values: kept.flat() };
}
