/** Every route of the agent-server API, registered on one router (tests walk its stack to reach each route). */
import type Router from '@koa/router';
import { registerAssistantRoutes } from './assistantRoutes';
import type { RuntimeServices } from './context';
import { registerMetaRoutes } from './metaRoutes';
import { registerRunRoutes } from './runRoutes';
import { registerThreadRoutes } from './threadRoutes';

/** Registers the meta, assistant, thread and run routes on `router`. */
export function registerRuntimeRoutes(router: Router, services: RuntimeServices): void {
  registerMetaRoutes(router, services);
  registerAssistantRoutes(router, services);
  registerThreadRoutes(router, services);
  registerRunRoutes(router, services);
}
