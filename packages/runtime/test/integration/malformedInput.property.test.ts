/**
 * Property: whatever arrives at any route of the deployed app's agent-server API (every route its router holds), the
 * answer is never a 5xx and every error is `{"detail": ...}` JSON. Bodies are shaped by the runtime's own Joi schemas.
 * `graphx dev` as a child process with the echo app (and again with its Python twin, whose run bodies reach the Python
 * executor) and a fresh PostgreSQL database; bounded by count and time per language.
 */
import fc from 'fast-check';
import joiToJson from 'joi-to-json';
import * as assistantSchemas from '../../src/http/assistantSchemas';
import * as runtimeSchemas from '../../src/http/schemas';
import {
  FuzzViolations,
  bodyText,
  closeFuzzAgent,
  contentType,
  encodeSegment,
  fuzzParameters,
  methodFor,
  queryString,
  send,
  shapeViolation,
  urlString,
  type RawRequest,
} from '../../../../test/support/fuzz';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';
import { runtimeRoutes, type RuntimeRoute } from './support/runtimeRoutes';

/** JSON schemas of every request schema the runtime declares, so bodies carry the field names it reads. */
function bodySchemas(): unknown[] {
  return [...Object.values(runtimeSchemas), ...Object.values(assistantSchemas)]
    .filter((value) => typeof value === 'object' && value !== null && 'describe' in value)
    .map((schema) => joiToJson(schema as never, 'open-api-3.1'));
}

const TIME_LIMIT_MS = 20_000;
const RUNS = 1_000;

test('the routes come from the runtime router, every thread and run route included', () => {
  const routes = runtimeRoutes().map((route) => `${route.method} ${route.path}`);
  expect(routes).toEqual(
    expect.arrayContaining([
      'POST /threads/search',
      'GET /threads',
      'POST /runs/wait',
      'POST /ui/:agent',
      'GET /ui/:agent/:basename',
    ]),
  );
});

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;
  let threadId: string;

  beforeAll(async () => {
    database = await createTestDatabase('fuzz');
    runtime = await startDevRuntime(fixtureIn('runtime-echo', language), database.url);
    const created = await fetch(`${runtime.url}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    threadId = ((await created.json()) as { thread_id: string }).thread_id;
    // The first schema read type-checks the graph's source (seconds, once per process): not what the walk measures.
    expect((await fetch(`${runtime.url}/assistants/agent/schemas`)).status).toBe(200);
  }, RUNTIME_START_MS + 30_000);
  afterAll(async () => {
    closeFuzzAgent();
    const exitCode = await runtime?.stop();
    await database?.drop();
    expect(exitCode).toBe(0);
  });

  test('answers every runtime route without a 5xx and every error as {"detail"} JSON', async () => {
    const schemas = bodySchemas();
    const paramValue = (name: string) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(name === 'assistantId' || name === 'agent' ? 'agent' : threadId) },
        { weight: 1, arbitrary: fc.uuid() },
        { weight: 3, arbitrary: urlString.filter((text) => text !== '') },
      );
    const queryNames = ['limit', 'offset', 'ids', 'metadata', 'values', 'status', 'sort_by', 'sort_order'];
    const requestFor = (route: RuntimeRoute): fc.Arbitrary<RawRequest> =>
      fc
        .record({
          method: methodFor(route.method),
          params: fc.tuple(...route.params.map(paramValue)),
          query: queryString(queryNames, () => urlString),
          body: fc.oneof(...schemas.map((schema) => bodyText(schema as never))),
          contentType,
        })
        .map(({ method, params, query, body, contentType: type }) => {
          let path = route.path;
          route.params.forEach((name, index) => {
            path = path.replace(`:${name}`, encodeSegment(params[index] as string));
          });
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          const withBody = !['GET', 'HEAD'].includes(method) && body !== undefined;
          if (withBody) headers['content-length'] = String(Buffer.byteLength(body));
          return { method, path: path + query, headers, body: withBody ? body : undefined };
        });

    const routes = runtimeRoutes();
    const violations = new FuzzViolations();
    const property = fc.asyncProperty(
      fc
        .integer({ min: 0, max: routes.length - 1 })
        .chain((index) =>
          requestFor(routes[index] as RuntimeRoute).map((request) => ({ request, route: routes[index] as RuntimeRoute })),
        ),
      async ({ request, route }) => {
        const response = await send(runtime.url, request);
        const violation = request.method === 'HEAD' ? (response.status >= 500 ? 'a 5xx' : null) : shapeViolation(response);
        if (violation) violations.add(`${request.method} ${route.path} → ${response.status}`, request, violation);
      },
    );
    violations.assertNone(await fc.check(property, fuzzParameters(RUNS, TIME_LIMIT_MS)), runtime.output);
  });

  test('GET /threads with an id that is not a UUID is a 422 naming ids', async () => {
    const response = await fetch(`${runtime.url}/threads?ids=not-a-uuid`);
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: Array<{ loc: unknown[] }> }).detail[0]!.loc).toEqual(['query', 'ids']);
  });

  test('POST /threads/search with an empty body searches with the defaults', async () => {
    const response = await fetch(`${runtime.url}/threads/search`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(Array.isArray(await response.json())).toBe(true);
  });

  test('a method a runtime route does not take is a JSON 405 with Allow', async () => {
    const response = await fetch(`${runtime.url}/threads/search`, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toContain('POST');
    expect(await response.json()).toEqual({ detail: 'Method Not Allowed' });
  });
});
