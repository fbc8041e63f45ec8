/** Every route of the agent-server API, registered on one router (tests walk its stack to reach each route). */
import type Router from '@koa/router';
import { registerAssistantRoutes } from './assistantRoutes';
import { registerBackgroundRunRoutes } from './backgroundRunRoutes';
import type { RuntimeServices } from './context';
import { registerMetaRoutes } from './metaRoutes';
import { registerRunRoutes } from './runRoutes';
import { registerStoreRoutes } from './storeRoutes';
import { registerThreadRoutes } from './threadRoutes';
import { registerThreadStateRoutes } from './threadStateRoutes';

/** Registers the meta, assistant, thread, state, run, background-run and store routes on `router`. */
export function registerRuntimeRoutes(router: Router, services: RuntimeServices): void {
  registerMetaRoutes(router, services);
  registerAssistantRoutes(router, services);
  registerThreadRoutes(router, services);
  registerThreadStateRoutes(router, services);
  registerRunRoutes(router, services);
  registerBackgroundRunRoutes(router, services);
  registerStoreRoutes(router, services, services.store);
}
