/**
 * Prometheus HTTP service discovery of the deployed apps (issue 24, point 9): each app instance serves its own
 * `/metrics` on its instance port (not through the gateway), and this lists those ports in the `http_sd_configs`
 * format (a JSON array of `{targets, labels}`), one group per instance, labelled with its deployment and revision.
 * Prometheus sends the API key as `Authorization: Bearer` (its `authorization` setting), which the API accepts.
 */
import type Router from '@koa/router';
import Joi from 'joi';
import { DeploymentRepository } from '../../db/repositories/deployments';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import type { RouteRegistry } from '../routeKit';

const targetGroup = Joi.object({
  targets: Joi.array().items(Joi.string().example('127.0.0.1:41234')),
  labels: Joi.object().pattern(Joi.string(), Joi.string()),
});

export function registerMetricsTargetRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  registry.add(
    router,
    {
      method: 'get',
      path: '/v2/metrics/targets',
      summary: "Prometheus HTTP service discovery (http_sd_configs) of the tenant's app instances and their /metrics",
      tags: ['operations'],
      responses: { 200: { description: 'Target groups, one per running instance', schema: Joi.array().items(targetGroup) } },
    },
    async (ctx) => {
      const instances = await new DeploymentRepository(deps.db).runningInstances(tenantOf(ctx).tenantId);
      ctx.body = instances.map((instance) => ({
        // Instances listen (or are published) on the machine's loopback: Prometheus runs beside the stack.
        targets: [`127.0.0.1:${instance.port}`],
        labels: {
          __metrics_path__: '/metrics',
          graphx_deployment: instance.deploymentName,
          graphx_deployment_id: instance.deploymentId,
          graphx_revision_id: instance.revisionId,
          graphx_instance_id: instance.id,
          graphx_instance_status: instance.status,
        },
      }));
    },
  );
}
