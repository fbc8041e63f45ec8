/** Every route of the agent-server API, registered on one router (tests walk its stack to reach each route). */
import type Router from '@koa/router';
import { registerA2aRoutes } from './a2aRoutes';
import { registerAssistantGraphRoutes } from './assistantGraphRoutes';
import { registerAssistantRoutes } from './assistantRoutes';
import { registerBackgroundRunRoutes } from './backgroundRunRoutes';
import type { RuntimeServices } from './context';
import { registerCronRoutes } from './cronRoutes';
import { registerDocsRoutes } from './docsRoutes';
import { registerMcpRoutes } from './mcpRoutes';
import { registerMetaRoutes } from './metaRoutes';
import { registerProtocolRoutes } from './protocolRoutes';
import { registerRunRoutes } from './runRoutes';
import { registerStoreRoutes } from './storeRoutes';
import { registerThreadPruneRoutes } from './threadPruneRoutes';
import { registerThreadRoutes } from './threadRoutes';
import { registerThreadStateRoutes } from './threadStateRoutes';
import { registerThreadStreamRoutes } from './threadStreamRoutes';

/** Registers the meta, assistant, thread, state, protocol-v2, run, background-run, store, cron and MCP routes on `router`. */
export function registerRuntimeRoutes(router: Router, services: RuntimeServices): void {
  registerMetaRoutes(router, services);
  registerAssistantRoutes(router, services);
  registerAssistantGraphRoutes(router, services);
  registerThreadPruneRoutes(router, services);
  registerThreadRoutes(router, services);
  registerThreadStateRoutes(router, services);
  registerThreadStreamRoutes(router, services);
  registerProtocolRoutes(router, services);
  registerRunRoutes(router, services);
  registerBackgroundRunRoutes(router, services);
  registerStoreRoutes(router, services, services.store);
  registerCronRoutes(router, services);
  registerMcpRoutes(router, services);
  registerA2aRoutes(router, services);
  registerDocsRoutes(router, services.customOpenApi ?? null);
}
