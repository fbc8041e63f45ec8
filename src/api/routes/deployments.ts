/** /v2/deployments: create, list, read, patch, delete, redeploy (CONTRACT §2.2). */
import type Router from '@koa/router';
import Joi from 'joi';
import { DeploymentService } from '../../deployments/service';
import {
  createDeploymentBody,
  deleteDeploymentQuery,
  deploymentIdParams,
  listDeploymentsQuery,
  patchDeploymentBody,
  revisionParams,
  type CreateDeploymentRequest,
  type PatchDeploymentRequest,
} from '../../deployments/schemas';
import { createDeploymentExample, deploymentViewSchema } from '../../deployments/viewSchemas';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import { pageOf } from '../openapiSchemas';
import type { RouteRegistry } from '../routeKit';

const detail = Joi.object({ detail: Joi.string() });
const deploymentResponse = { description: 'Deployment', schema: deploymentViewSchema };

export function registerDeploymentRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  const service = new DeploymentService(deps);
  const tags = ['deployments'];

  registry.add<unknown, unknown, CreateDeploymentRequest>(
    router,
    {
      method: 'post',
      path: '/v2/deployments',
      summary: 'Create a deployment (and its tracing project); its first revision starts building',
      tags,
      body: createDeploymentBody.example(createDeploymentExample),
      responses: {
        201: deploymentResponse,
        400: { description: 'Rule failure', schema: detail },
        409: { description: 'Name taken', schema: detail },
      },
    },
    async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await service.create(tenantOf(ctx).tenantId, body);
    },
  );

  registry.add<unknown, { limit: number; offset: number; name_contains?: string; status?: string }, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/deployments',
      summary: 'List deployments',
      tags,
      query: listDeploymentsQuery,
      responses: {
        200: { description: 'Page of deployments', schema: pageOf(deploymentViewSchema, 'Deployments of the tenant') },
      },
    },
    async (ctx, { query }) => {
      ctx.body = await service.list(tenantOf(ctx).tenantId, {
        nameContains: query.name_contains,
        status: query.status,
        limit: query.limit,
        offset: query.offset,
      });
    },
  );

  registry.add<{ deployment_id: string }, unknown, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/deployments/:deployment_id',
      summary: 'Get a deployment',
      tags,
      params: deploymentIdParams,
      responses: { 200: deploymentResponse, 404: { description: 'Not found', schema: detail } },
    },
    async (ctx, { params }) => {
      ctx.type = 'application/json';
      ctx.body = await service.getJson(tenantOf(ctx).tenantId, params.deployment_id);
    },
  );

  registry.add<{ deployment_id: string }, unknown, PatchDeploymentRequest>(
    router,
    {
      method: 'patch',
      path: '/v2/deployments/:deployment_id',
      summary: 'Patch a deployment; a new revision is made when source_revision_config, secrets or resource_spec change',
      tags,
      params: deploymentIdParams,
      body: patchDeploymentBody,
      responses: {
        200: deploymentResponse,
        400: { description: 'Rule failure', schema: detail },
        404: { description: 'Not found', schema: detail },
      },
    },
    async (ctx, { params, body }) => {
      ctx.body = await service.patch(tenantOf(ctx).tenantId, params.deployment_id, body ?? {});
    },
  );

  registry.add<{ deployment_id: string }, { delete_tracing_project: boolean }, unknown>(
    router,
    {
      method: 'delete',
      path: '/v2/deployments/:deployment_id',
      summary: 'Delete a deployment: its app stops and its database is dropped',
      tags,
      params: deploymentIdParams,
      query: deleteDeploymentQuery,
      responses: {
        204: { description: 'Deletion started' },
        404: { description: 'Not found', schema: detail },
        409: { description: 'Already being deleted', schema: detail },
      },
    },
    async (ctx, { params, query }) => {
      await service.delete(tenantOf(ctx).tenantId, params.deployment_id, query.delete_tracing_project);
      ctx.status = 204;
    },
  );

  registry.add<{ deployment_id: string; revision_id: string }, unknown, unknown>(
    router,
    {
      method: 'post',
      path: '/v2/deployments/:deployment_id/revisions/:revision_id/redeploy',
      summary: "Redeploy a revision: a new revision with that revision's configuration",
      tags,
      params: revisionParams,
      responses: {
        200: deploymentResponse,
        404: { description: 'Not found', schema: detail },
        409: { description: 'The deployment is being deleted', schema: detail },
      },
    },
    async (ctx, { params }) => {
      ctx.body = await service.redeploy(tenantOf(ctx).tenantId, params.deployment_id, params.revision_id);
    },
  );
}
