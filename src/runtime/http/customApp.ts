/**
 * graphx.json `http.app`: the app's own Fetch-style HTTP app (a Hono app, or any object with `fetch(request)`), asked
 * first after authentication, as the anchor's JS server mounts it. Whatever it answers is the answer, except a 404,
 * which means "not mine": the request then goes on to the agent-server routes (so the app's routes win). The app gets
 * the request body as sent (up to the JSON body limit), JSON or not.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type Koa from 'koa';
import { ConfigError } from '../../config';
import { NotFoundError } from '../../errors';
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

export function customAppMiddleware(app: FetchApp): Koa.Middleware {
  return async (ctx, next) => {
    const response = await app.fetch(toRequest(ctx));
    if (response.status === 404) {
      await response.body?.cancel();
      if (ctx.state.bodyError) throw ctx.state.bodyError;
      return next();
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

/** The route group of an API path (the anchor's `http.disable_<group>` names); null for paths no flag covers. */
export function routeGroupOf(path: string): RouteGroup | null {
  if (/^\/threads\/[^/]+\/runs(\/|$)/.test(path) || /^\/runs(\/|$)/.test(path)) return 'runs';
  if (/^\/threads(\/|$)/.test(path)) return 'threads';
  if (/^\/assistants(\/|$)/.test(path)) return 'assistants';
  if (/^\/store(\/|$)/.test(path)) return 'store';
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
