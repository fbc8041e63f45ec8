/**
 * Auth service v2 (CONTRACT §3): OAuth providers, the authorization flow and its two browser redirects. The redirects
 * (`callback`, `setup`) carry no API key: the signed, single-use `state` names the attempt and so the tenant.
 */
import type Router from '@koa/router';
import Joi from 'joi';
import { AuthorizationFlow } from '../../auth/authorizationFlow';
import { ProviderService } from '../../auth/providerService';
import {
  authenticateBody,
  authenticateResponse,
  callbackQuery,
  callbackResponse,
  pageQuery,
  providerCreateBody,
  providerParams,
  providerResponse,
  providerUpdateBody,
  waitParams,
  waitQuery,
  waitResponse,
  type AuthenticateBody,
  type CallbackQuery,
  type ProviderCreateBody,
  type ProviderUpdateBody,
} from '../../auth/schemas';
import { handleOAuthCallback, handleSetupCallback } from '../../auth/setupCallback';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import { pageOf } from '../openapiSchemas';
import type { RouteRegistry } from '../routeKit';
import { registerIntegrationRoutes } from './integrations';

const detail = Joi.object({ detail: Joi.string() });
type ProviderPath = { provider_id: string };
type Page = { limit: number; offset: number };

export function registerAuthRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  const providers = new ProviderService(deps);
  const flow = new AuthorizationFlow(deps);
  const tags = ['auth'];
  const notFound = { description: 'Provider not found', schema: detail };

  registry.add<unknown, unknown, ProviderCreateBody>(
    router,
    {
      method: 'post',
      path: '/v2/auth/providers',
      summary: 'Create an OAuth provider',
      tags,
      body: providerCreateBody,
      responses: {
        200: { description: 'The provider (without its secret)', schema: providerResponse },
        409: { description: 'provider_id taken', schema: detail },
      },
    },
    async (ctx, { body }) => {
      ctx.body = await providers.create(tenantOf(ctx).tenantId, body);
    },
  );

  registry.add<unknown, Page, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/auth/providers',
      summary: 'List OAuth providers',
      tags,
      query: pageQuery,
      responses: { 200: { description: 'Page of providers', schema: pageOf(providerResponse, 'OAuth providers') } },
    },
    async (ctx, { query }) => {
      ctx.body = await providers.list(tenantOf(ctx).tenantId, query);
    },
  );

  registry.add<ProviderPath, unknown, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/auth/providers/:provider_id',
      summary: 'Get an OAuth provider',
      tags,
      params: providerParams,
      responses: { 200: { description: 'The provider', schema: providerResponse }, 404: notFound },
    },
    async (ctx, { params }) => {
      ctx.body = await providers.get(tenantOf(ctx).tenantId, params.provider_id);
    },
  );

  registry.add<ProviderPath, unknown, ProviderUpdateBody>(
    router,
    {
      method: 'patch',
      path: '/v2/auth/providers/:provider_id',
      summary: 'Change an OAuth provider (null fields stay as they are)',
      tags,
      params: providerParams,
      body: providerUpdateBody,
      responses: {
        200: { description: 'The provider', schema: providerResponse },
        400: { description: 'Immutable field changed', schema: detail },
        404: notFound,
      },
    },
    async (ctx, { params, body }) => {
      ctx.body = await providers.update(tenantOf(ctx).tenantId, params.provider_id, body);
    },
  );

  registry.add<ProviderPath, unknown, unknown>(
    router,
    {
      method: 'delete',
      path: '/v2/auth/providers/:provider_id',
      summary: 'Delete an OAuth provider with its tokens and integrations',
      tags,
      params: providerParams,
      responses: { 200: { description: 'Deleted', schema: Joi.object({ message: Joi.string() }) }, 404: notFound },
    },
    async (ctx, { params }) => {
      ctx.body = await providers.delete(tenantOf(ctx).tenantId, params.provider_id);
    },
  );

  registry.add<unknown, unknown, AuthenticateBody>(
    router,
    {
      method: 'post',
      path: '/v2/auth/authenticate',
      summary: 'Start an authorization: returns the URL to send the user to',
      tags,
      body: authenticateBody,
      responses: { 200: { description: 'Pending attempt', schema: authenticateResponse }, 404: notFound },
    },
    async (ctx, { body }) => {
      ctx.body = await flow.start(tenantOf(ctx).tenantId, body);
    },
  );

  registry.add<{ auth_id: string }, { timeout: number }, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/auth/wait/:auth_id',
      summary: 'Wait (long poll) for an authorization to complete',
      tags,
      params: waitParams,
      query: waitQuery,
      responses: { 200: { description: 'Outcome', schema: waitResponse } },
    },
    async (ctx, { params, query }) => {
      const gone = new AbortController();
      ctx.req.once('close', () => gone.abort());
      ctx.body = await flow.wait(tenantOf(ctx).tenantId, params.auth_id, query.timeout, gone.signal);
    },
  );

  const redirectResponses = {
    200: { description: 'Outcome page (JSON)', schema: callbackResponse },
    400: { description: 'Provider error, bad, reused or expired state, refused exchange', schema: detail },
  };

  registry.add<ProviderPath, CallbackQuery, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/auth/callback/:provider_id',
      summary: 'OAuth redirect target: exchanges the code (browser redirect, protected by state)',
      tags,
      auth: 'none',
      params: providerParams,
      query: callbackQuery,
      responses: redirectResponses,
    },
    async (ctx, { params, query }) => {
      ctx.body = await handleOAuthCallback(flow, params.provider_id, query);
    },
  );

  registry.add<ProviderPath, CallbackQuery, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/auth/setup/:provider_id',
      summary: 'Setup URL of a code-hosting app: install, update or request (browser redirect, protected by state)',
      tags,
      auth: 'none',
      params: providerParams,
      query: callbackQuery,
      responses: redirectResponses,
    },
    async (ctx, { params, query }) => {
      ctx.body = await handleSetupCallback(flow, params.provider_id, query);
    },
  );

  registerIntegrationRoutes(router, registry, deps);
}
