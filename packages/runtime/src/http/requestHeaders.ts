/**
 * Request headers a run's graph sees: every `x-*` header and `user-agent` of the request that creates a run are copied
 * into `config.configurable` (over what the body sent), so app code and custom routes can pass per-request values
 * without touching the body. graphx.json `http.configurable_headers` changes the choice as the Python server does:
 * `excludes` takes headers out, `includes` (when given) names the only ones copied, any header, not just `x-*`.
 * Credentials never are.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import type { ConfigurableHeadersConfig } from '@graphx/contract/graphxConfig';
import { LOOPBACK_HEADER } from './loopback';
import type { RunRequest } from '../execution/runService';

/** The anchor's list, plus our own credential headers (a control-plane key may reach the app through the gateway). */
const NEVER_COPIED = new Set(['authorization', 'x-api-key', 'x-tenant-id', 'x-service-key', 'x-auth-scheme', LOOPBACK_HEADER]);

/** Which header names are copied. */
export type HeaderRule = (name: string) => boolean;

const DEFAULT_RULE: HeaderRule = (name) => name === 'user-agent' || name.startsWith('x-');

/** A pattern literal but for `*` (any run of characters), as the anchor's: no other regular expression is possible. */
function patternOf(text: string): RegExp {
  const source = text
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's');
}

/** The rule of graphx.json `http.configurable_headers` (null: the default, `x-*` and `user-agent`). */
export function headerRuleOf(config: ConfigurableHeadersConfig | null): HeaderRule {
  if (!config) return DEFAULT_RULE;
  const includes = config.includes.map(patternOf);
  const excludes = config.excludes.map(patternOf);
  return (name) => {
    if (excludes.some((pattern) => pattern.test(name))) return false;
    return includes.length > 0 ? includes.some((pattern) => pattern.test(name)) : DEFAULT_RULE(name);
  };
}

/** Puts the app's rule where the run routes read it (`ctx.state.headerRule`). */
export function headerRuleMiddleware(rule: HeaderRule): Koa.Middleware {
  return (ctx, next) => {
    ctx.state.headerRule = rule;
    return next();
  };
}

function copiedHeaders(headers: IncomingHttpHeaders, rule: HeaderRule): Record<string, string> | null {
  let copied: Record<string, string> | null = null;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string' || NEVER_COPIED.has(name) || !rule(name)) continue;
    (copied ??= {})[name] = value;
  }
  return copied;
}

/** `body` with the request's headers in `config.configurable` (the body itself is not changed). */
export function withRequestHeaders<T extends Pick<RunRequest, 'config'>>(body: T, ctx: Koa.Context): T {
  const copied = copiedHeaders(ctx.headers, (ctx.state.headerRule as HeaderRule | undefined) ?? DEFAULT_RULE);
  if (!copied) return body;
  const config = body.config ?? {};
  return { ...body, config: { ...config, configurable: { ...(config.configurable ?? {}), ...copied } } };
}
