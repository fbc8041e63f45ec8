/** Gives every request an id (kept from a sane incoming X-Request-Id) and echoes it on every response. */
import crypto from 'node:crypto';
import type Koa from 'koa';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = SAFE_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    await next();
  };
}
