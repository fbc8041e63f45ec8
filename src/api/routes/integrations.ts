/** Code-host integrations (CONTRACT §3): the installations usable as `source_config.integration_id`. */
import type Router from '@koa/router';
import Joi from 'joi';
import { listIntegrations } from '../../auth/integrationService';
import { integrationResponse, pageQuery } from '../../auth/schemas';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import type { RouteRegistry } from '../routeKit';

/** Registered by `registerAuthRoutes`, which owns the flow that creates integrations. */
export function registerIntegrationRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  registry.add<unknown, { limit: number; offset: number }, unknown>(
    router,
    {
      method: 'get',
      path: '/v1/integrations/codehost/install',
      summary: 'List code-host integrations (app installations)',
      tags: ['integrations'],
      query: pageQuery,
      responses: {
        200: {
          description: 'Page of integrations',
          schema: Joi.object({ resources: Joi.array().items(integrationResponse), offset: Joi.number().integer() }),
        },
      },
    },
    async (ctx, { query }) => {
      ctx.body = await listIntegrations(deps.db, tenantOf(ctx).tenantId, query);
    },
  );
}
