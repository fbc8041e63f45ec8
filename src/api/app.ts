/** The control-plane Koa app: middleware in order, then one router file per resource. */
import path from 'node:path';
import Koa from 'koa';
import { ApiKeyRepository } from '../db/repositories/apiKeys';
import { createMetricsRegistry, HttpMetrics, metricsHandler } from '@graphx/kit/http/metrics';
import { Readiness, readinessHandler } from '@graphx/kit/http/readiness';
import { requestLogMiddleware } from '@graphx/kit/http/requestLog';
import { logger } from '@graphx/kit/logger';
import { projectRoot } from '../config';
import { temporalReadinessCheck } from '../temporal/client';
import type { ApiDeps } from './deps';
import { requireApiKey } from './middleware/apiKeyAuth';
import { errorMiddleware } from '@graphx/kit/http/errors';
import { jsonBodyMiddleware } from '@graphx/kit/http/jsonBody';
import Router from '@koa/router';
import { everyHttpMethod } from '@graphx/kit/http/router';
import { requestIdMiddleware } from '@graphx/kit/http/requestId';
import { registerControlPlaneMetrics } from './metrics';
import { requireServiceToken } from './middleware/serviceTokenAuth';
import { buildOpenApi } from './openapi';
import { registerDocsRoutes } from './openapiDocs';
import { RouteRegistry } from './routeKit';
import { consolePagesMiddleware } from '@graphx/kit/http/consolePages';
import { registerAppProxyRoutes } from './routes/appProxy';
import { registerAuthRoutes } from './routes/auth';
import { registerDeploymentRoutes } from './routes/deployments';
import { registerInternalRoutes } from './routes/internal';
import { registerMetricsTargetRoutes } from './routes/metricsTargets';
import { registerRevisionRoutes } from './routes/revisions';
import { registerTracingRoutes } from './routes/tracing';

/** The control-plane Koa app. */
export function createApp(deps: ApiDeps): Koa {
  return buildApi(deps).app;
}

/** The app and the registry of its declared routes (tests walk every route, internal ones included). */
export function buildApi(deps: ApiDeps): { app: Koa; registry: RouteRegistry } {
  const app = new Koa();
  app.proxy = false;
  const router = new Router({ methods: everyHttpMethod() });
  const registry = new RouteRegistry({
    apiKey: requireApiKey(new ApiKeyRepository(deps.db)),
    service: requireServiceToken(deps.db),
  });

  // Bodies are read only for a route that matched path and method: a wrong method is a 405 whatever the body.
  router.use(jsonBodyMiddleware());
  router.get('/ok', (ctx) => {
    ctx.body = { ok: true };
  });
  const readiness = new Readiness([
    { name: 'database', check: () => deps.db.raw('select 1') },
    temporalReadinessCheck(deps.temporal.connection),
  ]);
  router.get('/ready', readinessHandler(readiness));
  const metricsRegistry = createMetricsRegistry('api');
  registerControlPlaneMetrics(metricsRegistry, deps.db);
  router.get('/metrics', metricsHandler(metricsRegistry));
  registerDeploymentRoutes(router, registry, deps);
  registerRevisionRoutes(router, registry, deps);
  registerAppProxyRoutes(router, registry, deps);
  registerAuthRoutes(router, registry, deps);
  registerTracingRoutes(router, registry, deps);
  registerInternalRoutes(router, registry, deps);
  registerMetricsTargetRoutes(router, registry, deps);

  const openApi = buildOpenApi(registry);
  router.get('/openapi.json', (ctx) => {
    ctx.body = openApi;
  });
  registerDocsRoutes(router);
  // A person opening the API's address in a browser lands on the console.
  router.get('/', (ctx) => ctx.redirect('/console/'));

  app.use(requestIdMiddleware());
  // The request line and the HTTP metrics see the final status: written when the response has ended, after the error
  // middleware answered.
  app.use(requestLogMiddleware(deps.log ?? logger, { metrics: new HttpMetrics(metricsRegistry) }));
  app.use(errorMiddleware());
  app.use(
    consolePagesMiddleware({
      mountPath: '/console',
      mode: 'console',
      distDir: path.join(projectRoot, 'packages', 'console', 'dist'),
      temporalUiUrl: deps.temporalUiUrl
        ? `${deps.temporalUiUrl}/namespaces/${encodeURIComponent(deps.config.temporalNamespace)}`
        : null,
    }),
  );
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, registry };
}
