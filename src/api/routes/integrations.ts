/** Code-host integrations (CONTRACT §3): the installations usable as `source_config.integration_id`. */
import type Router from '@koa/router';
import Joi from 'joi';
import { listIntegrations } from '../../auth/integrationService';
import { handleCodehostWebhook } from '../../auth/webhookService';
import { integrationResponse, pageQuery } from '../../auth/schemas';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import type { RouteRegistry } from '../routeKit';

const detail = Joi.object({ detail: Joi.string() });

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

  registry.add<{ id: string }, unknown, unknown>(
    router,
    {
      method: 'post',
      path: '/v1/integrations/codehost/webhook/:id',
      summary:
        'Webhook of a code-hosting app (its provider `id`): a signed push creates a revision at the pushed commit for ' +
        'each deployment with build_on_push that follows the pushed repository and ref',
      tags: ['integrations'],
      // The signature (X-Hub-Signature-256, HMAC-SHA256 with the provider's webhook_secret) is the authentication.
      auth: 'none',
      params: Joi.object({ id: Joi.string().uuid().required() }),
      responses: {
        200: { description: 'A ping', schema: Joi.object({ ok: Joi.boolean() }) },
        202: {
          description: 'Handled: the revisions created (none for a redelivery, a non-push event, or no matching deployment)',
          schema: Joi.object({
            event: Joi.string(),
            duplicate: Joi.boolean(),
            revisions: Joi.array().items(Joi.object({ deployment_id: Joi.string().uuid(), revision_id: Joi.string().uuid() })),
          }),
        },
        401: { description: 'No webhook secret on the provider, or a bad signature', schema: detail },
        404: { description: 'Unknown provider', schema: detail },
      },
    },
    async (ctx, { params, body }) => {
      const raw = Buffer.from(typeof ctx.state.rawBody === 'string' ? ctx.state.rawBody : '', 'utf8');
      const answer = await handleCodehostWebhook(deps, params.id, ctx.headers, raw, body);
      ctx.status = answer.status;
      ctx.body = answer.body;
    },
  );
}
