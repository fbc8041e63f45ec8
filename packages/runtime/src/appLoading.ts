/**
 * The application's own code, loaded at start: its Python executor (when graphx.json names a Python module), graphs,
 * custom auth (JavaScript or Python) and custom app. What fails to load is a ConfigError naming it, with the executor
 * stopped.
 */
import { ConfigError } from '@graphx/kit/errors';
import type { AppConfig } from './appConfig';
import { isJsAuth, jsAppAuth, type AppAuth } from './auth/appAuth';
import { GraphRegistry } from './graphs';
import type Koa from 'koa';
import { asFetchApp, customAppMiddleware } from './http/customApp';
import { importExport } from './moduleLoader';
import type { PythonExecutor } from './python/executor';
import { pythonAppAuth } from './python/pythonAuth';
import { pythonApp } from './python/pythonHttpApp';
import { startPythonExecutor } from './python/startExecutor';
import type { RuntimeStorage } from './storage/runtimeStorage';
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

/** graphx.json `http.app`: the app's middleware, and its OpenAPI document when it has one (a FastAPI app's). */
export interface CustomApp {
  middleware: Koa.Middleware;
  openapi: Record<string, unknown> | null;
}

/** graphx.json `http.app` as the middleware that asks it first: a Fetch-style (Hono) app, or a Python ASGI app. */
async function loadCustomApp(config: AppConfig, python: PythonExecutor | null): Promise<CustomApp | null> {
  const ref = config.http.app;
  if (!ref) return null;
  if (ref.language === 'python') {
    return pythonApp(python!, ref, config.appDir).catch((error: Error) => {
      throw new ConfigError(`http.app: ${error.message}`);
    });
  }
  return { middleware: customAppMiddleware(asFetchApp(await importExport(ref), `${ref.file}:${ref.exportName}`)), openapi: null };
}

/** The application's code: its Python executor (when it has Python modules), graphs, auth and custom app. */
export async function loadApplication(
  appConfig: AppConfig,
  databaseUri: string,
  storage: Pick<RuntimeStorage, 'graphCheckpointer' | 'store'>,
  tuning: { pythonCancelGraceMs: number },
): Promise<{ python: PythonExecutor | null; graphs: GraphRegistry; appAuth: AppAuth | null; customApp: CustomApp | null }> {
  const python = appConfig.python
    ? await startPythonExecutor(appConfig, databaseUri, storage.store, tuning.pythonCancelGraceMs)
    : null;
  try {
    const graphs = await GraphRegistry.load(
      appConfig.graphs,
      storage.graphCheckpointer,
      storage.store,
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
