/**
 * GET /ok (the rollout's health check), GET /info and GET /metrics (the operator's scraper, on the instance port: the
 * gateway does not forward it), all without authentication (auth/authMiddleware.ts PUBLIC_PATHS).
 */
import type Router from '@koa/router';
import { metricsHandler } from '@graphx/kit/http/metrics';
import type { RuntimeServices } from './context';

export function registerMetaRoutes(router: Router, services: RuntimeServices): void {
  router.get('/ok', async (ctx) => {
    // `check_db=1` (the Python server's readiness form) also asks the database; without it, liveness only.
    if (['1', 'true'].includes(String(ctx.query.check_db ?? ''))) {
      try {
        await services.checkDatabase();
      } catch (error) {
        ctx.status = 503;
        ctx.body = { detail: `The database does not answer: ${(error as Error).message}` };
        return;
      }
    }
    ctx.body = { ok: true };
  });
  router.get('/info', (ctx) => {
    ctx.body = services.info;
  });
  router.get('/metrics', (ctx, next) => metricsHandler(services.metrics.registry)(ctx, next));
}
