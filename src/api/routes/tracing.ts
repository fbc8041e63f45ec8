/** /v1/projects: tracing projects of the tenant and the runs recorded in them (CONTRACT §2.4). */
import type Router from '@koa/router';
import Joi from 'joi';
import { TracingRepository } from '../../db/repositories/tracing';
import { NotFoundError } from '@graphx/kit/errors';
import { tracingProjectSchema, tracingRunSchema } from '../../tracing/viewSchemas';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import { pageOf } from '../openapiSchemas';
import type { RouteRegistry } from '../routeKit';

const pageQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(100).default(20),
  offset: Joi.number().integer().min(0).default(0),
});
const projectParams = Joi.object({ project_id: Joi.string().guid().required() });
const detail = Joi.object({ detail: Joi.string() });
type Page = { limit: number; offset: number };

const projectNotFound = (id: string) => new NotFoundError(`Project ID ${id} not found.`);

export function registerTracingRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  const repository = new TracingRepository(deps.db);
  const tags = ['tracing'];

  registry.add<unknown, Page, unknown>(
    router,
    {
      method: 'get',
      path: '/v1/projects',
      summary: 'List tracing projects',
      tags,
      query: pageQuery,
      responses: { 200: { description: 'Page of projects', schema: pageOf(tracingProjectSchema, 'Tracing projects') } },
    },
    async (ctx, { query }) => {
      const projects = await repository.listProjects(tenantOf(ctx).tenantId, query.limit, query.offset);
      ctx.body = { resources: projects, offset: query.offset + projects.length };
    },
  );

  registry.add<{ project_id: string }, unknown, unknown>(
    router,
    {
      method: 'get',
      path: '/v1/projects/:project_id',
      summary: 'Get a tracing project',
      tags,
      params: projectParams,
      responses: {
        200: { description: 'Project', schema: tracingProjectSchema },
        404: { description: 'Not found', schema: detail },
      },
    },
    async (ctx, { params }) => {
      const project = await repository.findProject(tenantOf(ctx).tenantId, params.project_id);
      if (!project) throw projectNotFound(params.project_id);
      ctx.body = project;
    },
  );

  registry.add<{ project_id: string }, Page, unknown>(
    router,
    {
      method: 'get',
      path: '/v1/projects/:project_id/runs',
      summary: 'List the runs recorded in a tracing project, newest first',
      tags,
      params: projectParams,
      query: pageQuery,
      responses: {
        200: { description: 'Page of runs', schema: pageOf(tracingRunSchema, 'Runs, newest first') },
        404: { description: 'Not found', schema: detail },
      },
    },
    async (ctx, { params, query }) => {
      const project = await repository.findProject(tenantOf(ctx).tenantId, params.project_id);
      if (!project) throw projectNotFound(params.project_id);
      const runs = await repository.listRuns(project.id, query.limit, query.offset);
      ctx.body = { resources: runs, offset: query.offset + runs.length };
    },
  );
}
