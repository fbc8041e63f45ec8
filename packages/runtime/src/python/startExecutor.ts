/**
 * Starts the Python executor of an app that has Python graphs: its environment (GRAPHX_PYTHON when a build made it,
 * else built and cached here, as `graphx dev` needs) and the server methods it calls back (the long-term store).
 */
import path from 'node:path';
import type { BaseStore, Operation } from '@langchain/langgraph-checkpoint';
import { logger } from '@graphx/kit/logger';
import type { AppConfig } from '../appConfig';
import { PythonExecutor } from './executor';
import { ensurePythonEnv } from './pythonEnv';
import { pythonImportRoots } from './pythonRequirements';

/** JSON nulls the executor sends for "not given" become absent fields, as LangGraph.js's store expects them. */
function withoutNulls(op: Record<string, unknown>): Operation {
  return Object.fromEntries(Object.entries(op).filter(([, value]) => value !== null)) as unknown as Operation;
}

/** Where environments are cached: GRAPHX_PYTHON_ENVS_DIR, else the app's own `.graphx/` (as `graphx dev` keeps its data). */
export function pythonEnvsDir(appDir: string): string {
  return process.env.GRAPHX_PYTHON_ENVS_DIR || path.join(appDir, '.graphx', 'python-envs');
}

/**
 * Starts the app's executor. GRAPHX_PYTHON (set by a runner whose BUILD made the environment) is used as is, the
 * running revision's local folders in front of its site-packages; otherwise the environment is built here.
 */
export async function startPythonExecutor(
  appConfig: AppConfig,
  databaseUri: string,
  store: BaseStore,
  cancelGraceMs: number,
): Promise<PythonExecutor> {
  const built = process.env.GRAPHX_PYTHON;
  const python =
    built ||
    (await ensurePythonEnv({
      envsDir: pythonEnvsDir(appConfig.appDir),
      config: appConfig.python!,
      appDir: appConfig.appDir,
      onLog: (line) => logger.info({ component: 'pip' }, line),
    }));
  return PythonExecutor.start({
    python,
    databaseUri,
    appDir: appConfig.appDir,
    // A uv project's members are never installed: the environment names them, built here or by a build.
    importRoots: built || appConfig.python!.source ? pythonImportRoots(appConfig.python!, appConfig.appDir, python) : [],
    cancelGraceMs,
    serverMethods: {
      'store.batch': async (params) => store.batch((params.ops as Array<Record<string, unknown>>).map(withoutNulls)),
    },
  });
}
