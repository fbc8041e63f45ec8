import type Router from '@koa/router';
import type { ApiDeps } from '../deps';
import type { RouteRegistry } from '../routeKit';

/** Placeholder: routes of this resource are added by its issue. */
export function registerTracingRoutes(_router: Router, _registry: RouteRegistry, _deps: ApiDeps): void {}
