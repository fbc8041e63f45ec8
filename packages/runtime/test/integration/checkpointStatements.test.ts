/**
 * graphx's checkpointer writes a checkpoint with its blobs, and a task's writes, in one statement each
 * (storage/checkpointStatements.ts) where the library's PostgresSaver sends one statement per row inside BEGIN/COMMIT.
 * The same calls on both, each against a database of its own, must leave the same rows, read back the same, and
 * keep the library's rule for a key given twice in one batch.
 */
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { emptyCheckpoint, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { Client as PgClient, Pool } from 'pg';
import { createTrackedPostgresSaver } from '../../src/storage/trackedCheckpointer';

const ADMIN_URL = process.env.GRAPHX_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const suffix = `${process.pid}_${Date.now().toString(36)}`;
const databases = [`gx_ckpt_library_${suffix}`, `gx_ckpt_graphx_${suffix}`];
const admin = new PgClient({ connectionString: ADMIN_URL });
const pools: Pool[] = [];

beforeAll(async () => {
  await admin.connect();
  for (const name of databases) {
    await admin.query(`CREATE DATABASE "${name}"`);
    pools.push(new Pool({ connectionString: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`), max: 2 }));
  }
});

afterAll(async () => {
  for (const pool of pools) await pool.end();
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
});

function checkpoint(id: string, values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return { ...emptyCheckpoint(), id, ts: '2026-12-06T00:00:00.000Z', channel_values: values, channel_versions: versions };
}

/** The same sequence of saver calls: three checkpoints (blobs, none, an unchanged one again) and seven write batches. */
async function exercise(saver: PostgresSaver): Promise<void> {
  const thread = { configurable: { thread_id: 't1', checkpoint_ns: '' } };
  const first = await saver.put(
    thread,
    checkpoint(
      '1ef0000000000001',
      { messages: [{ role: 'user', content: 'hi' }], count: 1 },
      { messages: 1, count: 1, empty: 1 },
    ),
    { source: 'input', step: -1, parents: {} },
    { messages: 1, count: 1, empty: 1 },
  );
  const second = await saver.put(
    first,
    checkpoint('1ef0000000000002', {}, { messages: 1, count: 1 }),
    { source: 'loop', step: 0, parents: {} },
    {},
  );
  await saver.putWrites(
    second,
    [
      ['messages', { role: 'ai', content: 'hello' }],
      ['count', 2],
    ],
    'task-a',
  );
  // Special channels only: a key given twice keeps the last, and a later batch replaces it.
  await saver.putWrites(
    second,
    [
      ['__interrupt__', { value: 'first' }],
      ['__interrupt__', { value: 'second' }],
    ],
    'task-b',
  );
  await saver.putWrites(second, [['__resume__', 'early']], 'task-e');
  await saver.putWrites(second, [['__resume__', 'late']], 'task-e');
  // Any other batch never replaces: the first of a key stays, in the batch and against earlier rows.
  await saver.putWrites(
    second,
    [
      ['count', 3],
      ['__error__', 'one'],
      ['__error__', 'two'],
    ],
    'task-c',
  );
  await saver.putWrites(second, [['count', 4]], 'task-c');
  await saver.putWrites(second, [], 'task-d');
  // The same checkpoint id again: its row is updated, its blobs (same versions) are kept as they were.
  await saver.put(
    first,
    checkpoint('1ef0000000000002', { count: 9 }, { count: 1 }),
    { source: 'update', step: 1, parents: {} },
    { count: 1 },
  );
}

async function rows(pool: Pool): Promise<unknown> {
  const read = async (sql: string) => (await pool.query(sql)).rows;
  return {
    checkpoints: await read(
      'SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints ORDER BY 1, 2, 3',
    ),
    blobs: await read('SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs ORDER BY 1, 2, 3, 4'),
    writes: await read(
      'SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes ORDER BY 1, 2, 3, 4, 5',
    ),
  };
}

test('one statement per checkpoint and per write batch leaves the rows the library leaves, and reads back the same', async () => {
  const library = new PostgresSaver(pools[0]!);
  const graphx = await createTrackedPostgresSaver(pools[1]!, 'commonjs');
  await library.setup();
  await graphx.setup();

  const statements = jest.spyOn(PgClient.prototype, 'query');
  await exercise(library);
  const libraryStatements = statements.mock.calls.length;
  statements.mockClear();
  await exercise(graphx);
  const graphxStatements = statements.mock.calls.length;
  statements.mockRestore();

  const expected = await rows(pools[0]!);
  expect(await rows(pools[1]!)).toEqual(expected);
  expect((expected as { writes: unknown[] }).writes).toHaveLength(6);
  // 3 puts and 7 write batches: one statement each, none for the empty batch.
  expect(graphxStatements).toBe(9);
  expect(libraryStatements).toBeGreaterThan(2 * graphxStatements);

  const config = { configurable: { thread_id: 't1', checkpoint_ns: '', checkpoint_id: '1ef0000000000002' } };
  const [fromLibrary, fromGraphx] = await Promise.all([library.getTuple(config), graphx.getTuple(config)]);
  expect(fromGraphx?.checkpoint).toEqual(fromLibrary?.checkpoint);
  expect(fromGraphx?.pendingWrites).toEqual(fromLibrary?.pendingWrites);
  expect(fromGraphx?.pendingWrites).toContainEqual(['task-b', '__interrupt__', { value: 'second' }]);
  expect(fromGraphx?.pendingWrites).toContainEqual(['task-e', '__resume__', 'late']);
  expect(fromGraphx?.pendingWrites).toContainEqual(['task-c', '__error__', 'one']);
  expect(fromGraphx?.pendingWrites).toContainEqual(['task-c', 'count', 3]);
});

test('a batch of writes too large for one statement is written as the library writes it', async () => {
  const graphx = await createTrackedPostgresSaver(pools[1]!, 'commonjs');
  const config = { configurable: { thread_id: 't2', checkpoint_ns: '', checkpoint_id: '1ef0000000000003' } };
  // 9000 writes × 8 parameters is more than one statement may carry (65535).
  const writes = Array.from({ length: 9000 }, (_, index) => ['fanout', { index }] as [string, unknown]);
  await graphx.putWrites(config, writes, 'task-wide');
  const stored = await pools[1]!.query(
    "SELECT count(*)::int AS n, max(idx) AS last FROM checkpoint_writes WHERE thread_id = 't2'",
  );
  expect(stored.rows[0]).toEqual({ n: 9000, last: 8999 });
});
