/**
 * The application's code, loaded for the server: its Python executor (when graphx.json names Python modules), its
 * graphs, its auth (JavaScript or Python) and its custom HTTP app; and what the app's code expects of the process.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { ConfigError } from '@graphx/kit/errors';
import { logger } from '@graphx/kit/logger';
import type { loadAppConfig } from './appConfig';
import { isJsAuth, jsAppAuth, type AppAuth } from './auth/appAuth';
import { GraphRegistry } from './graphs';
import { asFetchApp, type FetchApp } from './http/customApp';
import { importExport } from './moduleLoader';
import type { PythonExecutor } from './python/executor';
import { pythonAppAuth } from './python/pythonAuth';
import { startPythonExecutor } from './python/startExecutor';
import { assistantDefaultsFromEnv } from './settings';
import type { createLongTermStore } from './storage/longTermStore';
import type { createTrackedPostgresSaver } from './storage/trackedCheckpointer';

export function packageVersion(appDir: string, name: string): string | null {
  try {
    return (createRequire(path.join(appDir, 'noop.js'))(`${name}/package.json`) as { version: string }).version;
  } catch {
    return null;
  }
}

/**
 * Makes `getLogger()` of `@langchain/langgraph-sdk/logging` work in app code, at import time included: the SDK reads
 * its logger from this global symbol, which the anchor's server sets before it loads graphs.
 */
export function registerSdkLogger(): void {
  const key = Symbol.for('langgraph.api.sdk-logger');
  (globalThis as Record<symbol, unknown>)[key] ??= logger.child({ component: 'app' });
}

async function loadAppAuth(config: ReturnType<typeof loadAppConfig>, python: PythonExecutor | null): Promise<AppAuth | null> {
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

/** The application's code: its Python executor (when it has Python modules), graphs, auth and custom app. */
export async function loadApplication(
  appConfig: ReturnType<typeof loadAppConfig>,
  databaseUri: string,
  checkpointer: Awaited<ReturnType<typeof createTrackedPostgresSaver>>,
  store: ReturnType<typeof createLongTermStore>,
): Promise<{ python: PythonExecutor | null; graphs: GraphRegistry; appAuth: AppAuth | null; customApp: FetchApp | null }> {
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
    const customApp: FetchApp | null = appConfig.http.app
      ? asFetchApp(await importExport(appConfig.http.app), `${appConfig.http.app.file}:${appConfig.http.app.exportName}`)
      : null;
    return { python, graphs, appAuth, customApp };
  } catch (error) {
    await python?.close();
    throw error;
  }
}
