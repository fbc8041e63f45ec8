/**
 * Request headers a run's graph sees: as the anchor's JS server does, every `x-*` header and `user-agent` of the
 * request that creates a run are copied into `config.configurable` (over what the body sent), so app code and custom
 * routes can pass per-request values without touching the body. Credentials never are.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LOOPBACK_HEADER } from './loopback';
import type { RunRequest } from '../execution/runService';

/** The anchor's list, plus our own credential headers (a control-plane key may reach the app through the gateway). */
const NOT_COPIED = new Set(['x-api-key', 'x-tenant-id', 'x-service-key', 'x-auth-scheme', LOOPBACK_HEADER]);

function copiedHeaders(headers: IncomingHttpHeaders): Record<string, string> | null {
  let copied: Record<string, string> | null = null;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string' || !(name === 'user-agent' || name.startsWith('x-')) || NOT_COPIED.has(name)) continue;
    (copied ??= {})[name] = value;
  }
  return copied;
}

/** `body` with the request's headers in `config.configurable` (the body itself is not changed). */
export function withRequestHeaders<T extends Pick<RunRequest, 'config'>>(body: T, headers: IncomingHttpHeaders): T {
  const copied = copiedHeaders(headers);
  if (!copied) return body;
  const config = body.config ?? {};
  return { ...body, config: { ...config, configurable: { ...(config.configurable ?? {}), ...copied } } };
}
