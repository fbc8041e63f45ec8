/**
 * Service-token routes a deployed app calls (docs/internal-contracts.md, "Runtime → control plane"). The token is
 * scoped to one deployment: it can verify keys of that deployment's tenant and record that deployment's runs only.
 */
import type Router from '@koa/router';
import Joi from 'joi';
import { ApiKeyRepository } from '../../db/repositories/apiKeys';
import { runRecordsBody } from '@graphx/contract/runRecord';
import { recordDeploymentRuns, type IncomingRunRecord } from '../../tracing/runRecords';
import type { ApiDeps } from '../deps';
import type { RouteRegistry } from '../routeKit';

const verifyBody = Joi.object({ api_key: Joi.string().min(1).max(512).required() });

export function registerInternalRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  const apiKeys = new ApiKeyRepository(deps.db);
  const tags = ['internal'];

  registry.add<unknown, unknown, { api_key: string }>(
    router,
    {
      method: 'post',
      path: '/internal/v1/api-keys/verify',
      summary: "Verify an X-Api-Key for a deployed app: valid only for a key of the deployment's tenant",
      tags,
      auth: 'service',
      body: verifyBody,
      responses: { 200: { description: '{"valid": true, "tenant_id", "owner"} or {"valid": false}' } },
    },
    async (ctx, { body }) => {
      const found = await apiKeys.findByKey(body.api_key);
      ctx.body =
        found && found.tenantId === ctx.state.serviceTenantId
          ? { valid: true, tenant_id: found.tenantId, owner: found.owner }
          : { valid: false };
    },
  );

  registry.add<unknown, unknown, { runs: IncomingRunRecord[] }>(
    router,
    {
      method: 'post',
      path: '/internal/v1/runs',
      summary: 'Record runs of the calling deployment into its tracing project (idempotent on run_id)',
      tags,
      auth: 'service',
      body: runRecordsBody,
      responses: { 202: { description: 'Recorded' } },
    },
    async (ctx, { body }) => {
      await recordDeploymentRuns(deps.db, ctx.state.serviceDeploymentId as string, body.runs);
      ctx.status = 202;
      ctx.body = { accepted: body.runs.length };
    },
  );
}
