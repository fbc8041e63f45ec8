/**
 * Custom auth written in Python (graphx.json `auth.path` naming a `langgraph_sdk.Auth`) behind the runtime's AppAuth:
 * the executor runs the app's handlers; an `Auth.exceptions.HTTPException` keeps its status, detail and headers, and
 * what a handler changed in the event's value (stamped metadata, a rewritten namespace) comes back into it.
 */
import { ForbiddenError } from '@graphx/kit/errors';
import { HttpExceptionError } from '@graphx/kit/http/httpException';
import type { ModuleExportRef } from '../appConfig';
import type { AppAuth } from '../auth/appAuth';
import { toContainment } from '../auth/authorization';
import { PythonError, type PythonExecutor } from './executor';

function asHttpException(error: unknown): unknown {
  if (!(error instanceof PythonError) || error.statusCode === undefined) return error;
  const detail = typeof error.detail === 'string' ? error.detail : JSON.stringify(error.detail ?? error.message);
  return new HttpExceptionError(error.statusCode, detail, error.headers ?? {});
}

/** Loads the app's Auth object in the executor and adapts it. @throws the executor's error when it does not load. */
export async function pythonAppAuth(executor: PythonExecutor, ref: ModuleExportRef, appDir: string): Promise<AppAuth> {
  const { authenticates } = await executor.call<{ authenticates: boolean }>('load_auth', { app_dir: appDir, auth: ref });
  return {
    authenticates,
    authenticate: async (request) => {
      const headers: Array<[string, string]> = [];
      request.headers.forEach((value, name) => headers.push([name, value]));
      const body = request.method === 'GET' || request.method === 'HEAD' ? null : await request.clone().text();
      return executor.call('authenticate', { method: request.method, url: request.url, headers, body }).catch((error) => {
        throw asHttpException(error);
      });
    },
    authorize: async (user, resource, action, value) => {
      const answer = await executor
        .call<{ result: unknown; value: Record<string, unknown> }>('authorize', { user, resource, action, value })
        .catch((error) => {
          throw asHttpException(error);
        });
      // Only what the handler changed is written back: the rest of `value` keeps its own objects.
      for (const [key, changed] of Object.entries(answer.value ?? {})) {
        if (JSON.stringify(changed) !== JSON.stringify(value[key])) value[key] = changed;
      }
      const result = answer.result;
      if (result === false) throw new ForbiddenError('Forbidden');
      if (result === undefined || result === null || result === true) return {};
      if (typeof result !== 'object')
        throw new Error(`Authorization handler for ${resource}:${action} returned ${typeof result}`);
      return toContainment(result as Record<string, unknown>);
    },
  };
}
