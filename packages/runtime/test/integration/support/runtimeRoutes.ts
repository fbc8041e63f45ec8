/** The routes the agent server registers, read from a router given the same registration (handlers never run). */
import Router from '@koa/router';
import { registerRuntimeRoutes } from '../../../src/http/routes';
import type { RuntimeServices } from '../../../src/http/routes/context';
import { registerUiRoutes } from '../../../src/http/routes/uiRoutes';

export interface RuntimeRoute {
  method: string;
  path: string;
  params: string[];
}

/** Every method and path the runtime's router answers (HEAD aside: Koa adds it to every GET). */
export function runtimeRoutes(): RuntimeRoute[] {
  const router = new Router();
  registerRuntimeRoutes(router, {} as RuntimeServices);
  registerUiRoutes(router, new Map());
  return router.stack.flatMap((layer) =>
    layer.methods
      .filter((method) => method !== 'HEAD')
      .map((method) => ({ method, path: layer.path as string, params: layer.paramNames.map((param) => String(param.name)) })),
  );
}
