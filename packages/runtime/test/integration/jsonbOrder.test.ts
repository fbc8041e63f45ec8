/**
 * A protocol event handed to a stream on the instance that wrote it is put in jsonb's key order, so that it leaves as
 * the same bytes as when it is read back from PostgreSQL (a resumed stream, another instance): checked against the
 * database itself, on keys where the order rules differ (length first, bytes not UTF-16 units, integer-like keys).
 */
import { Client as PgClient } from 'pg';
import { inJsonbOrder } from '../../src/storage/jsonbOrder';

const values: unknown[] = [
  { type: 'ai', content: 'x', id: 'a', tool_calls: [{ name: 'n', args: { zeta: 1, alpha: [true, null] }, id: 'c' }] },
  { b: 1, a: 2, aa: 3, B: 4, _: 5, ' ': 6, '': 7 },
  { 10: 'ten', 9: 'nine', a: 'a', '01': 'zero-one', '-1': 'minus' },
  { é: 1, z: 2, zz: 3, '\u{1F600}': 4, '\uFFFD': 5, ß: 6 },
  { nested: { deeper: { c: 3, bb: 2, a: 1 } }, list: [{ y: 1, x: 2 }, 'text', 3.5, -0, 1e21] },
  { same: 1, same2: { k: 'v' }, ['__proto__']: { polluted: true } },
  JSON.parse('{"dup":1,"dup":2,"__proto__":{"kept":"as a key"}}'),
  'plain string',
  [3, { b: 1, a: 1 }],
  null,
];

test('an event in jsonb key order serializes as the same event read back from PostgreSQL', async () => {
  const client = new PgClient({
    connectionString: process.env.GRAPHX_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  await client.connect();
  try {
    for (const value of values) {
      const json = JSON.stringify(value);
      const stored = (await client.query('SELECT $1::jsonb AS data', [json])).rows[0].data;
      expect(JSON.stringify(inJsonbOrder(JSON.parse(json)))).toBe(JSON.stringify(stored));
    }
  } finally {
    await client.end();
  }
});
