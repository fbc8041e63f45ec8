/**
 * The application's custom auth (graphx.json `auth.path`) as the runtime uses it: authenticate a request, authorize
 * an event. One adapter reads the JS SDK's `Auth` object (its handlers sit under the SDK's private `~handlerCache`,
 * the only place they are kept); everything else calls this interface, so an `Auth` written in another language can
 * stand behind it too.
 */
import { authorize, type AuthFilter, type AuthorizationCallback } from './authorization';
import type { AuthUser } from './authUser';

export interface AppAuth {
  /** Whether the app authenticates requests itself (else the deployment's API keys do). */
  readonly authenticates: boolean;
  /** The app's `authenticate` result for `request` (what it returned or threw). */
  authenticate(request: Request): Promise<unknown>;
  /**
   * Runs the app's handler for `resource:action`; it may mutate `value` (stamp `value.metadata`).
   * @returns the containment filter to apply (`{}`: no restriction).
   * @throws ForbiddenError when the handler returns false; what the handler throws (an SDK HTTPException) as is.
   */
  authorize(user: AuthUser, resource: string, action: string, value: Record<string, unknown>): Promise<AuthFilter>;
}

/** The shape of `Auth` from `@langchain/langgraph-sdk/auth` (the app's own copy, so matched by shape). */
interface JsAuth {
  '~handlerCache': {
    authenticate?: (request: Request) => unknown;
    callbacks?: Record<string, AuthorizationCallback>;
  };
}

/** True when `value` looks like an `Auth` instance of the JS SDK. */
export function isJsAuth(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as JsAuth)['~handlerCache'] === 'object';
}

/** The adapter over a JS SDK `Auth` object (checked with isJsAuth). */
export function jsAppAuth(auth: unknown): AppAuth {
  const handlers = (auth as JsAuth)['~handlerCache'];
  return {
    authenticates: typeof handlers.authenticate === 'function',
    authenticate: async (request) => handlers.authenticate?.(request),
    authorize: (user, resource, action, value) => authorize(handlers.callbacks, user, resource, action, value),
  };
}

/** Runs `resource:action` of the app's auth for `user`; no filter without a user or without custom auth. */
export async function authorizeFor(
  appAuth: AppAuth | null,
  user: AuthUser | null,
  resource: string,
  action: string,
  value: Record<string, unknown>,
): Promise<AuthFilter> {
  if (!user || !appAuth) return {};
  return appAuth.authorize(user, resource, action, value);
}
