/** Revisions of a deployment: list, read, interrupt, retry, logs; and the app's own logs (CONTRACT §2.3). */
import type Router from '@koa/router';
import Joi from 'joi';
import { RevisionService } from '../../deployments/revisionService';
import { DeploymentService } from '../../deployments/service';
import { RevisionStatusWatch } from '../../deployments/revisionStatusWatch';
import { deploymentIdParams, getRevisionQuery, listRevisionsQuery, logsQuery, revisionParams } from '../../deployments/schemas';
import { logPageSchema, revisionViewSchema, signalSentSchema } from '../../deployments/viewSchemas';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import { pageOf } from '../openapiSchemas';
import type { RouteRegistry } from '../routeKit';

const detail = Joi.object({ detail: Joi.string() });
type RevisionPath = { deployment_id: string; revision_id: string };
type LogsQuery = { order: 'asc' | 'desc'; limit: number; offset: number };

export function registerRevisionRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  const service = new RevisionService(deps, new DeploymentService(deps));
  const watch = new RevisionStatusWatch(deps.db);
  const tags = ['revisions'];

  registry.add<{ deployment_id: string }, { limit: number; offset: number; status?: string }, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/deployments/:deployment_id/revisions',
      summary: 'List revisions, newest first',
      tags,
      params: deploymentIdParams,
      query: listRevisionsQuery,
      responses: {
        200: { description: 'Page of revisions', schema: pageOf(revisionViewSchema, 'Revisions, newest first') },
        404: { description: 'Not found', schema: detail },
      },
    },
    async (ctx, { params, query }) => {
      ctx.type = 'application/json';
      ctx.body = await service.listBody(tenantOf(ctx).tenantId, params.deployment_id, {
        statuses: query.status?.split(','),
        limit: query.limit,
        offset: query.offset,
      });
    },
  );

  registry.add<RevisionPath, { wait_for_change_from?: string; timeout: number }, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/deployments/:deployment_id/revisions/:revision_id',
      summary: 'Get a revision; with wait_for_change_from, held until its status changes (long poll)',
      tags,
      params: revisionParams,
      query: getRevisionQuery,
      responses: {
        200: { description: 'Revision', schema: revisionViewSchema },
        404: { description: 'Not found', schema: detail },
      },
    },
    async (ctx, { params, query }) => {
      const tenantId = tenantOf(ctx).tenantId;
      if (!query.wait_for_change_from) {
        ctx.type = 'application/json';
        ctx.body = await service.getJson(tenantId, params.deployment_id, params.revision_id);
        return;
      }
      const gone = new AbortController();
      // The response's close (not the request's: that fires once a GET is read) tells that the client left.
      ctx.res.once('close', () => gone.abort());
      ctx.body = await service.getWhenChanged(tenantId, params.deployment_id, params.revision_id, {
        fromStatus: query.wait_for_change_from,
        timeoutMs: query.timeout * 1000,
        watch,
        abort: gone.signal,
      });
    },
  );

  registry.add<RevisionPath, unknown, unknown>(
    router,
    {
      method: 'post',
      path: '/v2/deployments/:deployment_id/revisions/:revision_id/interrupt',
      summary: 'Interrupt a revision in progress',
      tags,
      params: revisionParams,
      responses: {
        202: { description: 'Interrupt sent', schema: signalSentSchema },
        404: { description: 'Not found', schema: detail },
        409: { description: 'Not in progress', schema: detail },
      },
    },
    async (ctx, { params }) => {
      await service.interrupt(tenantOf(ctx).tenantId, params.deployment_id, params.revision_id);
      ctx.status = 202;
      ctx.body = { detail: `Interrupt sent to revision ${params.revision_id}.` };
    },
  );

  registry.add<RevisionPath, unknown, unknown>(
    router,
    {
      method: 'post',
      path: '/v2/deployments/:deployment_id/revisions/:revision_id/retry',
      summary: 'Retry a failed revision from the step that failed',
      tags,
      params: revisionParams,
      responses: {
        202: { description: 'Retry sent', schema: signalSentSchema },
        404: { description: 'Not found', schema: detail },
        409: { description: 'Not failed', schema: detail },
      },
    },
    async (ctx, { params }) => {
      await service.retry(tenantOf(ctx).tenantId, params.deployment_id, params.revision_id);
      ctx.status = 202;
      ctx.body = { detail: `Retry sent to revision ${params.revision_id}.` };
    },
  );

  registry.add<RevisionPath, LogsQuery, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/deployments/:deployment_id/revisions/:revision_id/logs',
      summary: 'Build and rollout log lines of a revision',
      tags,
      params: revisionParams,
      query: logsQuery,
      responses: { 200: { description: 'Log lines', schema: logPageSchema }, 404: { description: 'Not found', schema: detail } },
    },
    async (ctx, { params, query }) => {
      ctx.body = await service.logs(tenantOf(ctx).tenantId, params.deployment_id, params.revision_id, query);
    },
  );

  registry.add<{ deployment_id: string }, LogsQuery, unknown>(
    router,
    {
      method: 'get',
      path: '/v2/deployments/:deployment_id/logs',
      summary: "The deployed app's own output",
      tags,
      params: deploymentIdParams,
      query: logsQuery,
      responses: { 200: { description: 'Log lines', schema: logPageSchema }, 404: { description: 'Not found', schema: detail } },
    },
    async (ctx, { params, query }) => {
      ctx.body = await service.appLogs(tenantOf(ctx).tenantId, params.deployment_id, query);
    },
  );
}
