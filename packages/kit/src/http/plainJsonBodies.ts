/**
 * Koa 3 tests an object body against the globals `ReadableStream`, `Blob` and `Response`, twice: when `ctx.body` is
 * set and when the answer is written, before it settles on JSON. Naming `Response` makes Node materialise its fetch
 * implementation (undici, with http2 and web streams): ~2.4 MB of heap and ~10 MB resident on Node 24, loaded by the
 * first JSON answer of a process that never fetches (an agent server whose graphs are Python). A plain object or
 * array is none of those three, so here its body takes Koa's own JSON branch directly when set, and is written as
 * Koa writes JSON (`JSON.stringify`, its length) by the outermost middleware; every other value goes through Koa
 * unchanged.
 */
import type Koa from 'koa';

type KoaResponseInternals = Koa.Response & { _body: unknown; _explicitStatus?: boolean };

function isPlainJson(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function isStream(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { pipe?: unknown }).pipe === 'function';
}

/**
 * Installs both shortcuts on this app (its responses, not Koa's shared prototype). Call it right after `new Koa()`:
 * its middleware must be the outermost, so that every other middleware still sees the object it set.
 */
export function setPlainJsonBodiesDirectly(app: Koa): void {
  const koaBody = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(app.response) as object, 'body');
  if (!koaBody?.get || !koaBody.set) return; // another Koa: leave its setter alone
  const { get, set } = koaBody;
  Object.defineProperty(app.response, 'body', {
    configurable: true,
    enumerable: koaBody.enumerable,
    get,
    set(this: KoaResponseInternals, value: unknown) {
      // A stream body being replaced needs Koa's clean-up of it.
      if (!isPlainJson(value) || isStream(this._body)) {
        set.call(this, value);
        return;
      }
      // Koa's JSON branch (koa/lib/response.js `set body`), word for word.
      this._body = value;
      if (!this._explicitStatus) this.status = 200;
      this.remove('Content-Length');
      if (!this.type || !/\bjson\b/i.test(this.type)) this.type = 'json';
    },
  });
  app.use(async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    // What Koa's respond() does with a JSON body, done before it looks at it. Content-Type stays what was set.
    if (isPlainJson(body) && ctx.respond !== false && ctx.method !== 'HEAD' && !ctx.res.headersSent) {
      ctx.body = JSON.stringify(body);
    }
  });
}
