/**
 * PostgreSQL's text form of a `bytea[]`, parsed without pg-types' array parser. The checkpointer reads a checkpoint's
 * channel values and pending writes as `array_agg(array[… bytea])` (@langchain/langgraph-checkpoint-postgres,
 * SELECT_SQL): two-dimensional bytea arrays holding every channel's serialised value, the whole message list of a
 * conversation among them, for every run on a thread and every checkpoint a history page returns. pg-types parses
 * arrays one character at a time (postgres-array 2.0: an object and an array push per character, and a copy of the
 * rest of the text for each inner array), which took ~5.7 ms of the ~27 ms of CPU of a conversation's turn once the
 * thread held ~200 messages (bench/runtimeProtocol.ts, `--cpu-prof`). Elements in hex form (`"\\x…"`, PostgreSQL's
 * default `bytea_output`) are sliced out and decoded by Buffer; any other text (escape form, dimension bounds, a shape
 * not seen here) goes to pg-types' own parser, so the values are the same either way.
 */
import { types, type CustomTypesConfig } from 'pg';

export const BYTEA_ARRAY_OID = 1001;

type TextParser = (text: string) => unknown;
/** pg-types' parser of an oid (its typings know only the scalar built-ins' oids). */
const builtinParser = (oid: number, format: 'text' | 'binary' = 'text') =>
  (types.getTypeParser as (oid: number, format: 'text' | 'binary') => TextParser)(oid, format);
export type ByteaArray = Array<Buffer | null | ByteaArray>;

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_X = 0x78;
const HEX_DIGITS = /^(?:[0-9a-fA-F]{2})*$/;

/** The elements from `{` at `start` to its `}`, and where parsing goes on; null when the text is not of the fast form. */
function parseLevel(text: string, start: number): { entries: ByteaArray; next: number } | null {
  const entries: ByteaArray = [];
  let position = start + 1;
  if (text.charCodeAt(position) === CLOSE) return { entries, next: position + 1 };
  for (;;) {
    const code = text.charCodeAt(position);
    if (code === OPEN) {
      const inner = parseLevel(text, position);
      if (!inner) return null;
      entries.push(inner.entries);
      position = inner.next;
    } else if (code === QUOTE) {
      // `"\\x<hex digits>"`: hex digits hold no quote or backslash, so the next quote ends the element.
      if (
        text.charCodeAt(position + 1) !== BACKSLASH ||
        text.charCodeAt(position + 2) !== BACKSLASH ||
        text.charCodeAt(position + 3) !== LOWER_X
      ) {
        return null;
      }
      const end = text.indexOf('"', position + 4);
      if (end < 0) return null;
      const hex = text.slice(position + 4, end);
      if (!HEX_DIGITS.test(hex)) return null;
      entries.push(Buffer.from(hex, 'hex'));
      position = end + 1;
    } else if (text.startsWith('NULL', position)) {
      entries.push(null);
      position += 4;
    } else {
      return null;
    }
    const separator = text.charCodeAt(position);
    position += 1;
    if (separator === CLOSE) return { entries, next: position };
    if (separator !== COMMA) return null;
  }
}

/** `text` (a `bytea[]` of any dimension in PostgreSQL's text form) as nested arrays of Buffers, null for NULL. */
export function parseByteaArray(text: string, fallback: TextParser = builtinParser(BYTEA_ARRAY_OID)): ByteaArray {
  const parsed = text.charCodeAt(0) === OPEN ? parseLevel(text, 0) : null;
  return parsed && parsed.next === text.length ? parsed.entries : (fallback(text) as ByteaArray);
}

const parseByteaArrayText = (text: string) => parseByteaArray(text);

/** pg's type parsers with `bytea[]` read by `parseByteaArray`: the `types` of the runtime's pool. */
export const runtimeTypeParsers: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === BYTEA_ARRAY_OID && format !== 'binary') return parseByteaArrayText;
    return builtinParser(oid, format);
  }) as CustomTypesConfig['getTypeParser'],
};
