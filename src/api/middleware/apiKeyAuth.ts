/**
 * X-Api-Key authentication for /v1 and /v2. Keys are looked up by their SHA-256 (so the lookup itself compares
 * digests, not keys) and never logged. Routes declared `auth: 'none'` are let through.
 */
import type Koa from 'koa';
import { UnauthorizedError } from '@graphx/kit/errors';
import type { ApiKeyRepository } from '../../db/repositories/apiKeys';
import { hashToken } from '../../security/secretBox';
import { BoundedMap } from '@graphx/kit/boundedMap';

export type AuthMode = 'apiKey' | 'none' | 'service';

export interface AuthenticatedTenant {
  tenantId: string;
  tenantName: string;
  owner: string;
}

/** Reads the tenant of a request authenticated by `requireApiKey`. */
export function tenantOf(ctx: Koa.ParameterizedContext): AuthenticatedTenant {
  const tenant = ctx.state.tenant as AuthenticatedTenant | undefined;
  if (!tenant) throw new UnauthorizedError('Missing X-Api-Key header.');
  return tenant;
}

/** How long a valid key's tenant is remembered: a key revoked in the database stops working within this. */
export const API_KEY_CACHE_MS = 10_000;
const API_KEY_CACHE_ENTRIES = 10_000;

/**
 * Resolves the key to its tenant, or throws 401. Valid keys are remembered for API_KEY_CACHE_MS (by their SHA-256,
 * never the key), so a CI job polling every second costs one database read per request, not two; refusals are not
 * remembered, so a key that was just created works at once.
 */
export function requireApiKey(apiKeys: ApiKeyRepository): Koa.Middleware {
  const cache = new BoundedMap<string, { tenant: AuthenticatedTenant; until: number }>(API_KEY_CACHE_ENTRIES);
  return async (ctx, next) => {
    // `Authorization: Bearer <key>` too: what tools that cannot set a header of their own send (Prometheus's SD).
    const key = ctx.get('X-Api-Key') || (/^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '');
    if (!key) throw new UnauthorizedError('Missing X-Api-Key header.');
    const digest = hashToken(key);
    const cached = cache.get(digest);
    if (cached && cached.until > Date.now()) {
      ctx.state.tenant = cached.tenant;
    } else {
      const found = await apiKeys.findByKey(key);
      if (!found) throw new UnauthorizedError('Invalid API key.');
      const tenant: AuthenticatedTenant = { tenantId: found.tenantId, tenantName: found.tenantName, owner: found.owner };
      cache.delete(digest); // re-inserted as the newest
      cache.set(digest, { tenant, until: Date.now() + API_KEY_CACHE_MS });
      ctx.state.tenant = tenant;
    }
    await next();
  };
}
