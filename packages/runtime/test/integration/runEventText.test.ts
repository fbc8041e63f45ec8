/**
 * Run events keep their data as the wire JSON written (a `json` column, storage/runEventStore.ts): a row read back
 * from PostgreSQL is the text a follower on the writing instance was handed, key order included, so a protocol event
 * sent as written (protocol/wireEvents.ts `wireFrameOf`, no parse) and the same event read back and serialised (a
 * resumed stream, another instance) are the same bytes. Checked on data a graph's state may hold (LangChain messages,
 * dates, boxed primitives, fields JSON leaves out, unicode and integer-like keys, an own `__proto__`, big and small
 * numbers, escapes), against the database itself; and the column of a database made before (jsonb) is converted.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { Pool } from 'pg';
import { protocolEvent, type ProtocolParams } from '../../src/execution/protocolFrames';
import { toWireJson } from '../../src/execution/serialize';
import { wireEventOf, wireFrameOf } from '../../src/protocol/wireEvents';
import { RunEventStore, writtenRows, type EventToStore } from '../../src/storage/runEventStore';
import { ensureRuntimeSchema } from '../../src/storage/schema';
import { createTestDatabase } from './support/runtimeHarness';

const values: Array<[string, unknown]> = [
  [
    'state with LangChain messages',
    {
      messages: [
        new HumanMessage({ id: 'human-1', content: 'hi' }),
        new AIMessage({ id: 'ai-1', content: 'echo: hi', tool_calls: [{ id: 'c', name: 'noop', args: { zb: 1, a: 2 } }] }),
      ],
      step: 3,
    },
  ],
  ['a bare message', new AIMessage({ id: 'ai-2', content: [{ type: 'text', text: 'x' }] })],
  ['dates and toJSON objects', { when: new Date(0), custom: { toJSON: () => ({ b: 1, a: [2, { dd: 1, c: 2 }] }) } }],
  ['boxed primitives', { n: new Number(4), s: new String('ab'), t: new Boolean(false) }],
  ['fields JSON leaves out', { gone: undefined, fn: () => 1, kept: null, list: [undefined, () => 1] }],
  ['holes and numbers', { holes: [1, , 3], nan: NaN, neg: -0, big: 1e21, small: 1e-7, max: Number.MAX_SAFE_INTEGER + 2 }],
  ['keys in no sorted order', { zz: 2, a: 3, '10': 4, '2': 5, é: 1, 'ü-key': 6, aaa: 7, b: 8, ['\u{1F600}']: 9, '': 0 }],
  ['an own __proto__', JSON.parse('{"z":1,"__proto__":{"y":2,"x":1},"a":0}')],
  ['escapes', { quote: 'say "hi"\\', control: '\t\n\u0001', unicode: '\u00e9\u2028\u{1F600}' }],
  ['a string', 'plain'],
  ['no data', undefined],
  ['null', null],
];

describe('run events read back are the text written', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: Pool;
  let store: RunEventStore;
  beforeAll(async () => {
    database = await createTestDatabase('evtext');
    pool = new Pool({ connectionString: database.url, max: 2 });
    await ensureRuntimeSchema(pool, async () => undefined);
    store = new RunEventStore(pool, 'test-instance');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  test('a protocol event sent as written equals the same event read back, byte for byte', async () => {
    const threadId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    const events: EventToStore[] = values.flatMap(([, data], index) =>
      [protocolEvent('values', [], data), protocolEvent('updates', ['agent:1', 'inner:2'], data, 'respond')].map(
        (event, offset) => ({ seq: 2 * index + offset, event: event.event, json: toWireJson(event.data as ProtocolParams) }),
      ),
    );
    const written = writtenRows(runId, events, await store.append(runId, threadId, events));
    const readBack = await store.forThread(threadId, '0');
    expect(readBack.map((row) => row.id)).toEqual(written.map((row) => row.id));
    for (const [index, row] of readBack.entries()) {
      const handedOver = written[index]!;
      const label = values[Math.floor(index / 2)]![0];
      // The column gives back the text written (json keeps it; jsonb would reorder keys and re-space it).
      expect([label, JSON.stringify(row.data)]).toEqual([label, handedOver.json]);
      expect(row.json).toBeUndefined();
      // What a follower sends: the handed-over row as written, the read-back row serialised from its data.
      const method = row.event.slice('protocol:'.length);
      expect([label, wireFrameOf(handedOver, method)]).toEqual([label, toWireJson(wireEventOf(row))]);
      expect(wireFrameOf(row, method)).toBeUndefined();
      // The event a follower filters on reads the same params from either row.
      expect(toWireJson(wireEventOf(handedOver))).toBe(toWireJson(wireEventOf(row)));
    }
    // A run's join reads the same rows by seq.
    expect((await store.forRun(runId, 0)).map((row) => JSON.stringify(row.data))).toEqual(events.map((event) => event.json));
  });

  test('a database made with the jsonb column is converted once, its rows kept', async () => {
    const old = await createTestDatabase('evjsonb');
    const oldPool = new Pool({ connectionString: old.url, max: 2 });
    try {
      await oldPool.query(`CREATE TABLE graphx_run_events (
        id bigserial PRIMARY KEY, run_id uuid, thread_id uuid, seq integer NOT NULL, event text NOT NULL, data jsonb,
        created_at timestamptz NOT NULL DEFAULT now())`);
      const threadId = crypto.randomUUID();
      await oldPool.query(`INSERT INTO graphx_run_events (thread_id, seq, event, data) VALUES ($1, 0, 'values', $2)`, [
        threadId,
        '{"zz":1,"a":[true,null]}',
      ]);
      const columnType = async () =>
        (
          await oldPool.query(
            `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
              WHERE attrelid = 'graphx_run_events'::regclass AND attname = 'data'`,
          )
        ).rows[0].type;
      await ensureRuntimeSchema(oldPool, async () => undefined);
      expect(await columnType()).toBe('json');
      const [row] = await new RunEventStore(oldPool, 'test-instance').forThread(threadId, '0');
      expect(row!.data).toEqual({ zz: 1, a: [true, null] });
      // A second start finds it converted and leaves it as it is.
      await ensureRuntimeSchema(oldPool, async () => undefined);
      expect(await columnType()).toBe('json');
    } finally {
      await oldPool.end();
      await old.drop();
    }
  });
});
