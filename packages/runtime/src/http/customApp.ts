/**
 * graphx.json `http.app`: the app's own Fetch-style HTTP app, asked first after authentication, as the anchor's JS
 * server mounts it. A Hono app is composed as the anchor composes it (`app.route('/', userApp)`): its routes win, its
 * middleware wraps every request (ours included: headers it sets after `next()` reach our answers, a body it rewrote
 * is the body our routes read), and its own `notFound` handler is not used. Any other Fetch-style app is asked first
 * and a 404 from it means "not mine". The app gets the request body as sent (up to the JSON body limit).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type Koa from 'koa';
import { ConfigError } from '@graphx/kit/errors';
import { NotFoundError } from '@graphx/kit/errors';
import type { RouteGroup } from '../appConfig';

export interface FetchApp {
  fetch(request: Request): Response | Promise<Response>;
}

/** @throws ConfigError when the export has no `fetch` method. */
export function asFetchApp(exported: unknown, name: string): FetchApp {
  const candidate = exported as FetchApp | null;
  if (!candidate || typeof candidate.fetch !== 'function') {
    throw new ConfigError(`http.app ${name} is not a Fetch-style app (an object with a fetch(request) method, e.g. Hono)`);
  }
  return candidate;
}

function toRequest(ctx: Koa.Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const raw = ctx.state.rawBody as string | undefined;
  const hasBody = ctx.method !== 'GET' && ctx.method !== 'HEAD' && raw !== undefined && raw !== '';
  return new Request(`http://${ctx.host || 'localhost'}${ctx.url}`, {
    method: ctx.method,
    headers,
    body: hasBody ? raw : undefined,
  });
}

/** What the composed Hono app's fall-through handler saw of a request it passed on to our routes. */
interface PassedOn {
  passed: boolean;
  /** The body as the app's middleware left it, when it read (and so may have changed) the JSON body. */
  body?: { value: unknown };
}

const passedOn = new AsyncLocalStorage<PassedOn>();

/** Headers of the fall-through answer that describe its (empty) body rather than anything the app's middleware set. */
const ENTITY_HEADERS = new Set(['content-length', 'content-type', 'content-encoding', 'transfer-encoding']);

interface HonoLike extends FetchApp {
  route(path: string, app: unknown): unknown;
  all(path: string, handler: (c: HonoContextLike) => Promise<Response>): unknown;
}

interface HonoContextLike {
  req: { bodyCache?: { json?: unknown } };
}

function isHono(app: FetchApp): app is HonoLike {
  const candidate = app as Partial<HonoLike> & { routes?: unknown };
  return typeof candidate.route === 'function' && typeof candidate.all === 'function' && Array.isArray(candidate.routes);
}

/**
 * A Hono app mounted under a host app of the app's own Hono class, whose last route hands the request on to us. The
 * app's `notFound` is a sub-app setting the anchor never consults, so a path nobody serves still 404s.
 */
function composeHono(app: HonoLike): FetchApp {
  const HostClass = app.constructor as new () => HonoLike;
  const host = new HostClass();
  host.route('/', app);
  host.all('*', async (c) => {
    const state = passedOn.getStore();
    if (state) {
      state.passed = true;
      const cached = c.req.bodyCache?.json;
      if (cached !== undefined) state.body = { value: await cached };
    }
    return new Response(null, { status: 404 });
  });
  return host;
}

export function customAppMiddleware(app: FetchApp): Koa.Middleware {
  const composed = isHono(app) ? composeHono(app) : null;
  return async (ctx, next) => {
    const state: PassedOn = { passed: false };
    const response = composed ? await passedOn.run(state, () => composed.fetch(toRequest(ctx))) : await app.fetch(toRequest(ctx));
    if (state.passed || (!composed && response.status === 404)) {
      await response.body?.cancel();
      if (state.body) {
        ctx.state.body = state.body.value;
        ctx.state.bodyError = undefined;
      }
      if (ctx.state.bodyError) throw ctx.state.bodyError;
      const headers: [string, string][] = [];
      if (state.passed) response.headers.forEach((value, name) => ENTITY_HEADERS.has(name) || headers.push([name, value]));
      for (const [name, value] of headers) ctx.set(name, value);
      await next();
      // As in Hono, what the middleware set after `next()` wins over the route's own header (unless already sent).
      if (!ctx.res.headersSent) for (const [name, value] of headers) ctx.set(name, value);
      return;
    }
    ctx.status = response.status;
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie' && name !== 'content-length') ctx.set(name, value);
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) ctx.set('Set-Cookie', cookies);
    ctx.body = response.body ? Readable.fromWeb(response.body as WebReadableStream) : null;
    if (!response.body) ctx.status = response.status;
  };
}

/** Paths the server answers whatever the app's `http.app` serves (the platform's probes and the API's own docs). */
const NEVER_SHADOWED = new Set(['/ok', '/metrics', '/docs', '/openapi.json']);

/** The custom app's middleware, skipped for the paths it may not shadow. */
export function unlessServerOwned(middleware: Koa.Middleware): Koa.Middleware {
  return (ctx, next) => (NEVER_SHADOWED.has(ctx.path) ? next() : middleware(ctx, next));
}

/** The route group of an API path (the anchor's `http.disable_<group>` names); null for paths no flag covers. */
export function routeGroupOf(path: string): RouteGroup | null {
  if (/^\/threads\/[^/]+\/runs(\/|$)/.test(path) || /^\/runs(\/|$)/.test(path)) return 'runs';
  if (/^\/threads(\/|$)/.test(path)) return 'threads';
  if (/^\/assistants(\/|$)/.test(path)) return 'assistants';
  if (/^\/store(\/|$)/.test(path)) return 'store';
  if (/^\/ui(\/|$)/.test(path)) return 'ui';
  if (/^\/mcp(\/|$)/.test(path)) return 'mcp';
  // /ok stays: the platform's readiness checks use it.
  if (['/info', '/metrics', '/docs', '/openapi.json'].includes(path)) return 'meta';
  return null;
}

/** Answers 404 for the route groups graphx.json turned off (`http.disable_runs` & co), as if they did not exist. */
export function disabledRoutesMiddleware(disabled: RouteGroup[]): Koa.Middleware {
  return async (ctx, next) => {
    const group = routeGroupOf(ctx.path);
    if (group && disabled.includes(group)) throw new NotFoundError(`Not Found: ${group} routes are disabled for this app.`);
    return next();
  };
}
