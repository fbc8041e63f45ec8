/**
 * Bounded property-based requests for the "no 5xx, documented shape" tests: arbitraries for hostile input (wrong types,
 * huge strings, deep nesting, NUL and other unicode, nulls, extra fields, bad UUIDs, bad JSON, wrong content types,
 * odd methods), a raw HTTP sender (any method, any bytes), and the check every answer must pass.
 */
import http from 'node:http';
import fc from 'fast-check';

/** The seed of every run: fixed so CI is deterministic, `GRAPHX_FUZZ_SEED` to explore. Printed on failure. */
export const FUZZ_SEED = Number(process.env.GRAPHX_FUZZ_SEED ?? 20261123);

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Sends `request` to `baseUrl` over loopback exactly as given (no method or body normalisation). */
export function send(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers: request.headers, agent },
      (response) => {
        const contentType = String(response.headers['content-type'] ?? '');
        // A stream that is rightly open (a thread's join stream lasts until the client leaves) is judged by its head.
        if (response.statusCode === 200 && contentType.startsWith('text/event-stream')) {
          response.destroy();
          resolve({ status: 200, contentType, text: '' });
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** Destroys the keep-alive sockets (call in afterAll). */
export function closeFuzzAgent(): void {
  agent.destroy();
}

/**
 * Why `response` breaks the rule, or null: never a 5xx; every error is JSON `{"detail": ...}`; a 422's detail is a
 * list of `{loc, msg, type}` whose `loc` starts with body, path or query.
 */
export function shapeViolation(response: RawResponse): string | null {
  // A method no route of the path has is a 405 (src/http/router.ts), whatever the method: no 5xx is right.
  if (response.status >= 500) return `answered ${response.status}: ${response.text.slice(0, 300)}`;
  if (response.status < 400) return null;
  if (!response.contentType.startsWith('application/json')) {
    return `error ${response.status} is ${response.contentType || 'untyped'}: ${response.text.slice(0, 200)}`;
  }
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return `error ${response.status} body is not JSON: ${response.text.slice(0, 200)}`;
  }
  if (typeof body !== 'object' || body === null || !('detail' in body)) return `error ${response.status} has no detail`;
  if (response.status !== 422) return null;
  const detail = (body as { detail: unknown }).detail;
  const wellFormed =
    Array.isArray(detail) &&
    detail.length > 0 &&
    detail.every(
      (issue: { loc?: unknown; msg?: unknown; type?: unknown }) =>
        Array.isArray(issue.loc) &&
        ['body', 'path', 'query'].includes(issue.loc[0]) &&
        typeof issue.msg === 'string' &&
        typeof issue.type === 'string',
    );
  return wellFormed ? null : `422 detail is not a list of {loc, msg, type}: ${response.text.slice(0, 300)}`;
}

/** A JSON value nested `depth` levels deep, as text (too deep for a recursive generator). */
export function deepJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Strings a column, a UUID parser or a pattern may choke on. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '%00',
    'not-a-uuid',
    '00000000-0000-0000-0000-000000000000',
    '\ud800',
    '💥'.repeat(10),
    '../../etc/passwd',
    "'; DROP TABLE deployments; --",
    '1e400',
    '-1',
    'true',
    'null',
  ),
  fc.constant('x'.repeat(70_000)),
  fc.uuid(),
);

/** A hostile string short enough for a URL (a 70 kB request line is Node's 431 before any app sees it). */
export const urlString: fc.Arbitrary<string> = hostileString.map((text) => text.slice(0, 3000));

/** Percent-encodes every byte of `text` that is not unreserved (lone surrogates become U+FFFD, as on the wire). */
export function encodeSegment(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** Any JSON value, NULs and odd numbers included, a few levels deep. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308),
    ),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

/** Values shaped like `schema` (right names, often right types) mixed with hostile ones, so validation goes deep. */
export function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return hostileJson;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((item) => valueFor(item, depth + 1)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const shaped: Array<fc.Arbitrary<unknown>> = [];
  if (schema.enum && schema.enum.length > 0) shaped.push(fc.constantFrom(...schema.enum));
  if (types.includes('object') || schema.properties) shaped.push(objectFor(schema, depth));
  if (types.includes('array')) shaped.push(fc.array(valueFor(schema.items, depth + 1), { maxLength: 3 }));
  if (types.includes('string')) shaped.push(hostileString);
  if (types.includes('integer') || types.includes('number')) {
    shaped.push(fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(2 ** 31, 2 ** 53 + 2, -1, 0.5, 1e20)));
  }
  if (types.includes('boolean')) shaped.push(fc.boolean());
  if (shaped.length === 0) return hostileJson;
  return fc.oneof({ weight: 4, arbitrary: fc.oneof(...shaped) }, { weight: 1, arbitrary: hostileJson });
}

function objectFor(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const known = Object.entries(schema.properties ?? {}).map(([name, property]) =>
    fc.option(valueFor(property, depth + 1), { nil: undefined, freq: 3 }).map((value) => [name, value] as const),
  );
  return fc
    .tuple(fc.tuple(...known), fc.dictionary(hostileString, hostileJson, { maxKeys: 2 }))
    .map(([pairs, extra]) => ({ ...extra, ...Object.fromEntries(pairs.filter(([, value]) => value !== undefined)) }));
}

/** A request body as text: mostly JSON shaped by `schema`, sometimes broken JSON, non-objects or deep nesting. */
export function bodyText(schema: JsonSchema | undefined): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: valueFor(schema ?? { type: 'object' }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: hostileJson.map((value) => JSON.stringify(value)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        ' ',
        '" "',
        'null',
        '[]',
        '{',
        '{"a":}',
        '123',
        'true',
        '\u0000',
        '{"a":"\\u0000"}',
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(deepJson(100), deepJson(20_000), `[${'['.repeat(5000)}${']'.repeat(5000)}]`) },
  );
}

/** A Content-Type header: mostly JSON, sometimes wrong or absent. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data') },
  { weight: 1, arbitrary: fc.constantFrom('application/json; charset=latin1', 'application/json; charset=utf-16') },
);

/** The route's own method most of the time, else another or an unusual one. */
export function methodFor(method: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(method.toUpperCase()) },
    { weight: 2, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'PURGE') },
  );
}

/** A query string from `names` (each maybe present, hostile values) plus an unknown parameter now and then. */
export function queryString(names: string[], valueOf: (name: string) => fc.Arbitrary<string>): fc.Arbitrary<string> {
  const pairs = names.map((name) => fc.option(valueOf(name), { nil: undefined, freq: 2 }).map((value) => [name, value] as const));
  return fc.tuple(fc.tuple(...pairs), fc.option(fc.tuple(hostileString, hostileString), { freq: 4 })).map(([known, extra]) => {
    const all = known.filter((pair): pair is readonly [string, string] => pair[1] !== undefined);
    if (extra) all.push([extra[0].slice(0, 100), extra[1].slice(0, 100)]);
    const text = all.map(([name, value]) => `${encodeSegment(name)}=${encodeSegment(value)}`).join('&');
    return text ? `?${text}` : '';
  });
}

/** How a property test reports its run, so a failure names the seed that reproduces it. */
export function fuzzParameters(numRuns: number, timeLimitMs: number): fc.Parameters<unknown> {
  return { seed: FUZZ_SEED, numRuns, interruptAfterTimeLimit: timeLimitMs, markInterruptAsFailure: false, endOnFailure: true };
}

/**
 * Violations seen during a run, one example per kind (method, route, status), so one run reports every class of
 * failure instead of stopping at the first; the seed that reproduces them is in the message.
 */
export class FuzzViolations {
  private readonly examples = new Map<string, string>();
  private count = 0;

  add(kind: string, request: RawRequest, violation: string): void {
    this.count += 1;
    if (this.examples.has(kind)) return;
    const body = request.body === undefined ? '' : ` body ${JSON.stringify(request.body.slice(0, 300))}`;
    this.examples.set(kind, `${kind}: ${violation}\n    request ${request.method} ${request.path.slice(0, 300)}${body}`);
  }

  /** Fails with every kind seen, the seed and how many requests ran; also fails a run that did almost nothing. */
  assertNone(details: fc.RunDetails<unknown>, serverLog: () => string = () => ''): void {
    const summary = `${details.numRuns} requests, seed ${FUZZ_SEED} (GRAPHX_FUZZ_SEED=${FUZZ_SEED} reproduces)`;
    if (details.failed && details.errorInstance) throw new Error(`${summary}: ${String(details.errorInstance)}`);
    if (this.count > 0) {
      const log = serverLog()
        .split('\n')
        .filter((line) => /error/i.test(line))
        .slice(-5)
        .join('\n');
      throw new Error(`${this.count} violations in ${summary}:\n${[...this.examples.values()].join('\n')}\n${log}`);
    }
    if (details.numRuns < 200) throw new Error(`only ${summary}: too few to mean anything`);
    process.stdout.write(`no violation in ${summary}\n`);
  }
}
