/**
 * X-Api-Key authentication for /v1 and /v2. Keys are looked up by their SHA-256 (so the lookup itself compares
 * digests, not keys) and never logged. Routes declared `auth: 'none'` are let through.
 */
import type Koa from 'koa';
import { UnauthorizedError } from '../../errors';
import type { ApiKeyRepository } from '../../db/repositories/apiKeys';

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

/** Resolves the key to its tenant, or throws 401. */
export function requireApiKey(apiKeys: ApiKeyRepository): Koa.Middleware {
  return async (ctx, next) => {
    const key = ctx.get('X-Api-Key');
    if (!key) throw new UnauthorizedError('Missing X-Api-Key header.');
    const found = await apiKeys.findByKey(key);
    if (!found) throw new UnauthorizedError('Invalid API key.');
    ctx.state.tenant = {
      tenantId: found.tenantId,
      tenantName: found.tenantName,
      owner: found.owner,
    } satisfies AuthenticatedTenant;
    await next();
  };
}
