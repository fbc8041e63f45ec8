/**
 * The runtime's pool reads `bytea[]` (the checkpointer's channel values and pending writes) with its own parser
 * (storage/byteaArrays.ts): every shape PostgreSQL sends must come out as pg-types' parser gives it, whether the fast
 * path reads it (hex elements) or hands it over (escape form, dimension bounds).
 */
import crypto from 'node:crypto';
import { Client as PgClient } from 'pg';
import { parseByteaArray, runtimeTypeParsers } from '../../src/storage/byteaArrays';

const adminUrl = process.env.GRAPHX_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

// Bytes a parser could trip on: quotes, backslashes, braces, commas, NUL, high bytes, "NULL" spelled out.
const tricky = Buffer.from('"\\{},NULL\0\xff x', 'latin1');
const big = crypto.randomBytes(200_000);
const ARRAYS: Array<[string, string, unknown[]]> = [
  ['one dimension', 'SELECT $1::bytea[] AS value', [[Buffer.from('abc'), tricky, Buffer.alloc(0)]]],
  ['NULL elements', 'SELECT ARRAY[$1::bytea, NULL, $2::bytea] AS value', [tricky, Buffer.from('z')]],
  ['an empty array', "SELECT '{}'::bytea[] AS value", []],
  ['a NULL array', 'SELECT NULL::bytea[] AS value', []],
  [
    "the checkpointer's shape: array_agg(array[text::bytea, text::bytea, blob])",
    `SELECT array_agg(array[c.channel::bytea, c.type::bytea, c.blob]) AS value
       FROM (VALUES ('messages', 'json', $1::bytea), ('__start__', 'empty', NULL), ('count', 'json', $2::bytea)) AS c(channel, type, blob)`,
    [big, tricky],
  ],
  ['two dimensions of NULLs', 'SELECT ARRAY[ARRAY[NULL::bytea, NULL], ARRAY[$1::bytea, $1::bytea]] AS value', [tricky]],
  ['dimension bounds', 'SELECT \'[0:1]={"\\\\x00ff",NULL}\'::bytea[] AS value', []],
];

describe('bytea[] read by the runtime pool', () => {
  let ours: PgClient;
  let library: PgClient;
  beforeAll(async () => {
    ours = new PgClient({ connectionString: adminUrl, types: runtimeTypeParsers });
    library = new PgClient({ connectionString: adminUrl });
    await Promise.all([ours.connect(), library.connect()]);
  });
  afterAll(async () => {
    await Promise.all([ours?.end(), library?.end()]);
  });

  for (const output of ['hex', 'escape']) {
    test.each(ARRAYS)(`${output} output: %s comes out as pg-types parses it`, async (_name, sql, params) => {
      await ours.query(`SET bytea_output = '${output}'`);
      await library.query(`SET bytea_output = '${output}'`);
      const expected = (await library.query(sql, params)).rows[0].value;
      const actual = (await ours.query(sql, params)).rows[0].value;
      expect(actual).toEqual(expected);
    });
  }

  test('hex elements are read by the fast path, not handed to pg-types', async () => {
    await library.query("SET bytea_output = 'hex'");
    // The text PostgreSQL sends, as the driver receives it.
    const text: string = (
      await library.query({
        text: `SELECT array_agg(array[c.channel::bytea, c.type::bytea, c.blob])::text AS value
                 FROM (VALUES ('messages', 'json', $1::bytea), ('x', 'empty', NULL)) AS c(channel, type, blob)`,
        values: [big],
      })
    ).rows[0].value;
    const fallback = jest.fn(() => 'handed over');
    const parsed = parseByteaArray(text, fallback);
    expect(fallback).not.toHaveBeenCalled();
    expect(parsed).toEqual([
      [Buffer.from('messages'), Buffer.from('json'), big],
      [Buffer.from('x'), Buffer.from('empty'), null],
    ]);
  });

  test('text that is not of the fast form is handed to pg-types', () => {
    const fallback = jest.fn(() => ['from pg-types']);
    for (const text of ['[0:0]={"\\\\x00"}', '{"\\\\001"}', '{"\\\\x0"}', '{"\\\\x00"', '{"\\\\x00"}x', '{abc}']) {
      fallback.mockClear();
      expect(parseByteaArray(text, fallback)).toEqual(['from pg-types']);
      expect(fallback).toHaveBeenCalledWith(text);
    }
  });
});
