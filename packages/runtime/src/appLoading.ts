/**
 * The application's own code, loaded at start: its Python executor (when graphx.json names a Python module), graphs,
 * custom auth (JavaScript or Python) and custom app. What fails to load is a ConfigError naming it, with the executor
 * stopped.
 */
import { ConfigError } from '@graphx/kit/errors';
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { AppConfig } from './appConfig';
import { isJsAuth, jsAppAuth, type AppAuth } from './auth/appAuth';
import { GraphRegistry } from './graphs';
import type Koa from 'koa';
import { asFetchApp, customAppMiddleware } from './http/customApp';
import { importExport } from './moduleLoader';
import type { PythonExecutor } from './python/executor';
import { pythonAppAuth } from './python/pythonAuth';
import { pythonAppMiddleware } from './python/pythonHttpApp';
import { startPythonExecutor } from './python/startExecutor';
import { assistantDefaultsFromEnv } from './settings';

async function loadAppAuth(config: AppConfig, python: PythonExecutor | null): Promise<AppAuth | null> {
  if (!config.auth) return null;
  if (config.auth.language === 'python') {
    return pythonAppAuth(python!, config.auth, config.appDir).catch((error: Error) => {
      throw new ConfigError(`auth.path: ${error.message}`);
    });
  }
  const exported = await importExport(config.auth);
  if (!isJsAuth(exported)) throw new ConfigError(`auth.path ${config.auth.file}:${config.auth.exportName} is not an Auth object`);
  return jsAppAuth(exported);
}

/** graphx.json `http.app` as the middleware that asks it first: a Fetch-style (Hono) app, or a Python ASGI app. */
async function loadCustomApp(config: AppConfig, python: PythonExecutor | null): Promise<Koa.Middleware | null> {
  const ref = config.http.app;
  if (!ref) return null;
  if (ref.language === 'python') {
    return pythonAppMiddleware(python!, ref, config.appDir).catch((error: Error) => {
      throw new ConfigError(`http.app: ${error.message}`);
    });
  }
  return customAppMiddleware(asFetchApp(await importExport(ref), `${ref.file}:${ref.exportName}`));
}

/** The application's code: its Python executor (when it has Python modules), graphs, auth and custom app. */
export async function loadApplication(
  appConfig: AppConfig,
  databaseUri: string,
  checkpointer: PostgresSaver,
  store: BaseStore,
): Promise<{ python: PythonExecutor | null; graphs: GraphRegistry; appAuth: AppAuth | null; customApp: Koa.Middleware | null }> {
  const python = appConfig.python ? await startPythonExecutor(appConfig, databaseUri, store) : null;
  try {
    const graphs = await GraphRegistry.load(
      appConfig.graphs,
      checkpointer,
      store,
      assistantDefaultsFromEnv(),
      python ? { executor: python, appDir: appConfig.appDir } : undefined,
    );
    const appAuth = await loadAppAuth(appConfig, python);
    const customApp = await loadCustomApp(appConfig, python);
    return { python, graphs, appAuth, customApp };
  } catch (error) {
    await python?.close();
    throw error;
  }
}
