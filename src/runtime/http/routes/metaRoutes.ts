/** GET /ok (the rollout's health check) and GET /info, both without authentication. */
import type Router from '@koa/router';
import type { RuntimeServices } from './context';

export function registerMetaRoutes(router: Router, services: RuntimeServices): void {
  router.get('/ok', (ctx) => {
    ctx.body = { ok: true };
  });
  router.get('/info', (ctx) => {
    ctx.body = services.info;
  });
}
