/**
 * CORS of the deployed app, from graphx.json `http.cors` (the anchor's keys). Without it, as the anchor's JS server:
 * any origin (`*`), the usual methods, the request's headers, `Content-Location` and the pagination headers exposed.
 * Credentials are only ever allowed for an origin named in `allow_origins` or matched by `allow_origin_regex`, never
 * through `*` (the anchor's rule since v0.14). A preflight from an origin or for a method outside the policy is a 400.
 */
import type { CorsConfig } from '@graphx/contract/graphxConfig';
import type Koa from 'koa';

export type { CorsConfig };

const DEFAULT_METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'];
const DEFAULT_EXPOSED = ['Content-Location', 'X-Pagination-Total', 'X-Pagination-Next'];

export function corsMiddleware(config: CorsConfig | null): Koa.Middleware {
  const origins = config?.allow_origins ?? ['*'];
  const anyOrigin = origins.includes('*');
  const originPattern = config?.allow_origin_regex ? new RegExp(`^(?:${config.allow_origin_regex})$`) : null;
  const methods = (config?.allow_methods ?? DEFAULT_METHODS).map((method) => method.toUpperCase());
  const anyMethod = methods.includes('*');
  const headers = config?.allow_headers ?? ['*'];
  const exposed = config?.expose_headers ?? DEFAULT_EXPOSED;
  const credentials = config?.allow_credentials ?? false;

  /** `*`, the origin itself (named or matched), or null (not allowed). */
  const allowedOrigin = (origin: string): { value: string; trusted: boolean } | null => {
    if (origins.includes(origin) || originPattern?.test(origin)) return { value: origin, trusted: true };
    return anyOrigin ? { value: '*', trusted: false } : null;
  };

  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (!origin) return next();
    const allowed = allowedOrigin(origin);
    if (allowed?.value !== '*') ctx.vary('Origin');
    const preflight = ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method');
    if (preflight) {
      const method = ctx.get('Access-Control-Request-Method').toUpperCase();
      if (!allowed || (!anyMethod && !methods.includes(method))) {
        ctx.status = 400;
        ctx.body = { detail: allowed ? `Disallowed CORS method ${method}` : `Disallowed CORS origin ${origin}` };
        return;
      }
      const requested = ctx.get('Access-Control-Request-Headers');
      ctx.set('Access-Control-Allow-Origin', allowed.value);
      if (credentials && allowed.trusted) ctx.set('Access-Control-Allow-Credentials', 'true');
      ctx.set('Access-Control-Allow-Methods', anyMethod ? method : methods.join(', '));
      const allowHeaders = headers.includes('*') ? requested : headers.join(', ');
      if (allowHeaders) ctx.set('Access-Control-Allow-Headers', allowHeaders);
      if (config?.max_age !== undefined) ctx.set('Access-Control-Max-Age', String(config.max_age));
      ctx.status = 204;
      return;
    }
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', allowed.value);
      if (credentials && allowed.trusted) ctx.set('Access-Control-Allow-Credentials', 'true');
      if (exposed.length > 0) ctx.set('Access-Control-Expose-Headers', exposed.join(', '));
    }
    await next();
  };
}
