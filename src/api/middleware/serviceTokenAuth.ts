/**
 * Service tokens: how a deployed app reaches the control plane (verify API keys, record runs). A token is scoped to
 * one deployment; `ctx.state.serviceDeploymentId` tells the route which.
 */
import type Koa from 'koa';
import type { Db } from '../../db/knex';
import { UnauthorizedError } from '@graphx/kit/errors';
import { hashToken } from '../../security/secretBox';

export function requireServiceToken(db: Db): Koa.Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
    if (!token) throw new UnauthorizedError('Missing service token.');
    const row = await db('service_tokens')
      .join('deployments', 'deployments.id', 'service_tokens.deployment_id')
      .where({ 'service_tokens.token_hash': hashToken(token) })
      .whereNull('deployments.deleted_at')
      .first('deployments.id as deployment_id', 'deployments.tenant_id');
    if (!row) throw new UnauthorizedError('Invalid service token.');
    ctx.state.serviceDeploymentId = row.deployment_id;
    ctx.state.serviceTenantId = row.tenant_id;
    await next();
  };
}
