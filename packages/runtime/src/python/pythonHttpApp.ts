/**
 * graphx.json `http.app` naming a Python ASGI app (Starlette, FastAPI): the app runs in the executor, and this
 * middleware, where a JavaScript custom app sits (after auth, before the API's routes), hands it each request as one
 * streaming RPC call. The executor answers "not mine" (no route of the app matches) or the response's start, then its
 * body chunk by chunk as the app sends them: a StreamingResponse reaches the client as it goes, not buffered. A client
 * that goes away cancels the app's handler.
 */
import { Readable } from 'node:stream';
import type Koa from 'koa';
import type { ModuleExportRef } from '../appConfig';
import type { PythonExecutor } from './executor';

type Answer = { pass: true; partial?: boolean } | { status: number; headers: Array<[string, string]> } | { body: string };

/** The app's HTTP routes as the executor exported them at load (`route_table` in http_app.py). */
interface ExportedRoute {
  pattern: string;
  methods: string[] | null;
}

type RouteMatch = 'full' | 'partial' | 'none' | 'ask';

/** Regex classes whose meaning differs between Python (Unicode) and JavaScript (ASCII without the `u` flag). */
const UNICODE_CLASSES = /\\[dDwWsSbB]/;

/**
 * The routes, compiled for JavaScript: Starlette's patterns are `^…$` of escaped literals and convertor classes, and
 * differ from JavaScript's syntax only in named groups (`(?P<name>` → `(?<name>`). A route table that cannot be
 * carried over exactly (a Unicode-dependent class, a pattern JavaScript refuses) gives null: every request is asked.
 */
export function compileRouteTable(
  table: ExportedRoute[] | null | undefined,
): Array<{ regex: RegExp; methods: Set<string> | null }> | null {
  if (!table) return null;
  const compiled: Array<{ regex: RegExp; methods: Set<string> | null }> = [];
  for (const route of table) {
    if (UNICODE_CLASSES.test(route.pattern)) return null;
    try {
      compiled.push({
        regex: new RegExp(route.pattern.replace(/\(\?P</g, '(?<')),
        methods: route.methods ? new Set(route.methods) : null,
      });
    } catch {
      return null;
    }
  }
  return compiled;
}

/**
 * How the app's router would match (as Starlette's: the first route matching path and method is "full", a path
 * matching for another method "partial"), decided here so API requests the app does not own never cross to the
 * executor. "ask" when only the executor can tell (a path that does not decode as Starlette's does).
 */
export function matchRoutes(
  routes: Array<{ regex: RegExp; methods: Set<string> | null }>,
  method: string,
  rawPath: string,
): RouteMatch {
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return 'ask';
  }
  // Python's `$` also matches before a final newline; JavaScript's does not.
  if (path.includes('\n')) return 'ask';
  let best: RouteMatch = 'none';
  for (const route of routes) {
    if (!route.regex.test(path)) continue;
    if (!route.methods || route.methods.has(method)) return 'full';
    best = 'partial';
  }
  return best;
}

/**
 * Loads the app (and starts its lifespan) in the executor: the middleware that hands it requests, and the app's own
 * OpenAPI document (a FastAPI app's; null otherwise). @throws the executor's error when it does not load.
 */
export async function pythonApp(
  executor: PythonExecutor,
  ref: ModuleExportRef,
  appDir: string,
): Promise<{ middleware: Koa.Middleware; openapi: Record<string, unknown> | null }> {
  const loaded = (await executor.call('load_http_app', { app_dir: appDir, app: ref })) as {
    table?: ExportedRoute[] | null;
    openapi?: Record<string, unknown> | null;
  };
  return { middleware: pythonAppMiddleware(executor, compileRouteTable(loaded?.table)), openapi: loaded?.openapi ?? null };
}

function pythonAppMiddleware(
  executor: PythonExecutor,
  routes: Array<{ regex: RegExp; methods: Set<string> | null }> | null,
): Koa.Middleware {
  return async (ctx, next) => {
    const local = routes ? matchRoutes(routes, ctx.method, ctx.path) : 'ask';
    if (local === 'partial') ctx.state.partialRoute = true;
    const first = local === 'full' || local === 'ask' ? await ask(executor, ctx, false) : null;
    if (first) return respond(ctx, first);
    if (ctx.state.bodyError) throw ctx.state.bodyError;
    await next();
    // Nothing of the API answered a path one of the app's routes has for another method: as under the Python server
    // (the app's routes and the API's in one router), the app's route answers (its 405).
    if (ctx.state.partialRoute && ctx.status === 404 && ctx.body == null) {
      const forced = await ask(executor, ctx, true);
      if (forced) respond(ctx, forced);
    }
  };
}

interface Started {
  start: { status: number; headers: Array<[string, string]> };
  answers: AsyncGenerator<Answer>;
}

/** Asks the app: its response's start and the rest to come, or null when it leaves the request to the API. */
async function ask(executor: PythonExecutor, ctx: Koa.Context, force: boolean): Promise<Started | null> {
  const raw = ctx.state.rawBody as string | undefined;
  const headers: Array<[string, string]> = [];
  for (let index = 0; index < ctx.req.rawHeaders.length; index += 2) {
    headers.push([ctx.req.rawHeaders[index]!, ctx.req.rawHeaders[index + 1]!]);
  }
  const gone = new AbortController();
  const onClose = () => gone.abort();
  ctx.res.once('close', onClose);
  const answers = executor.stream(
    'http_request',
    {
      method: ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      headers,
      body: ctx.method === 'GET' || ctx.method === 'HEAD' ? null : (raw ?? null),
      scheme: ctx.protocol,
      client: ctx.ip || null,
      force,
    },
    gone.signal,
  ) as AsyncGenerator<Answer>;
  const first = await answers.next();
  if (!first.done && 'status' in first.value) return { start: first.value, answers };
  ctx.res.off('close', onClose);
  for await (const rest of answers) void rest; // the executor's answer follows at once
  if (first.done) throw new Error('http.app ended without answering');
  if ('pass' in first.value && first.value.partial) ctx.state.partialRoute = true;
  return null;
}

function respond(ctx: Koa.Context, { start, answers }: Started): void {
  ctx.status = start.status;
  const grouped = new Map<string, string[]>();
  for (const [name, value] of start.headers) grouped.set(name.toLowerCase(), [...(grouped.get(name.toLowerCase()) ?? []), value]);
  for (const [name, values] of grouped) {
    // Koa sets the length of what it sends; a streamed body goes chunked.
    if (name === 'content-length') continue;
    ctx.set(name, values.length === 1 ? values[0]! : values);
  }
  ctx.body = Readable.from(bodyChunks(answers), { objectMode: false });
  // Koa's body setter gives a stream without a type one; the app's choice (none) stands.
  if (!grouped.has('content-type')) ctx.remove('Content-Type');
}

async function* bodyChunks(answers: AsyncGenerator<Answer>): AsyncGenerator<Buffer> {
  for await (const answer of answers) {
    if ('body' in answer) yield Buffer.from(answer.body, 'base64');
  }
}
