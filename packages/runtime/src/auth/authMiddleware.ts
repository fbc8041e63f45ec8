/**
 * Who is calling. Three modes: custom auth (the app's `Auth` object), the deployment tenant's `X-Api-Key` verified by
 * the control plane, or nobody (`graphx dev` without custom auth). A debugging-UI request (`x-auth-scheme:
 * graphx-studio`) is admitted only with a valid control-plane key; the header alone is never trusted.
 */
import type Koa from 'koa';
import { UnauthorizedError } from '@graphx/kit/errors';
import { ControlPlaneUnavailableError, type ControlPlaneClient } from '../controlPlaneClient';
import { HttpExceptionError } from '@graphx/kit/http/httpException';
import { isLoopbackRequest, LOOPBACK_HEADER } from '../http/loopback';
import type { AppAuth } from './appAuth';
import { normaliseAuthResult, studioUser, type AuthUser, type RequestAuth } from './authUser';

/** `/metrics` is for the operator's scraper on the instance port; the gateway does not forward it (gateway.ts). */
const PUBLIC_PATHS = new Set(['/ok', '/info', '/metrics', '/openapi.json', '/docs']);
const STUDIO_SCHEME = 'graphx-studio';

/** The Fetch `Request` custom `authenticate` handlers receive. */
function toFetchRequest(ctx: Koa.Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const hasBody = ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.state.body !== undefined;
  return new Request(`http://${ctx.host || 'localhost'}${ctx.url}`, {
    method: ctx.method,
    headers,
    body: hasBody ? JSON.stringify(ctx.state.body) : undefined,
  });
}

async function verifiedKeyOwner(controlPlane: ControlPlaneClient | null, apiKey: string): Promise<string | null> {
  if (!controlPlane || !apiKey) return null;
  try {
    const verdict = await controlPlane.verifyApiKey(apiKey);
    return verdict.valid ? (verdict.owner ?? 'api-key') : null;
  } catch (error) {
    if (error instanceof ControlPlaneUnavailableError) {
      throw new HttpExceptionError(503, 'Cannot verify the API key right now: the control plane is unreachable.');
    }
    throw error;
  }
}

/**
 * Sets `ctx.state.auth` for every route except /ok, /info, /metrics, /openapi.json, /docs (and its assets), GET /ui/*.
 * `devStudio` (graphx dev only): the debugging-UI user is admitted with the dev server's studio token instead.
 */
export function authMiddleware(options: {
  appAuth: AppAuth | null;
  controlPlane: ControlPlaneClient | null;
  devStudio?: { isToken: (given: string) => boolean } | null;
}): Koa.Middleware {
  const { appAuth, controlPlane, devStudio } = options;
  return async (ctx, next) => {
    // Generative-UI bundles load through <script>/<link> tags, which send no credentials (as the anchor: GET /ui/*).
    if (
      PUBLIC_PATHS.has(ctx.path) ||
      (ctx.method === 'GET' && (ctx.path.startsWith('/ui/') || ctx.path.startsWith('/docs/assets/')))
    )
      return next();
    let user: AuthUser | null = null;
    const apiKey = ctx.get('x-api-key');
    if (ctx.get('x-auth-scheme') === STUDIO_SCHEME && devStudio && !controlPlane) {
      if (apiKey && devStudio.isToken(apiKey)) user = studioUser('developer');
      // Without custom auth graphx dev checks no one: the header then grants nothing a plain request lacks.
      else if (appAuth) throw new UnauthorizedError('A debugging-UI request needs the studio token graphx dev printed.');
    } else if (ctx.get('x-auth-scheme') === STUDIO_SCHEME) {
      const owner = await verifiedKeyOwner(controlPlane, apiKey);
      if (!owner) throw new UnauthorizedError('A debugging-UI request needs a valid X-Api-Key of this deployment.');
      user = studioUser(owner);
    } else if (appAuth?.authenticates) {
      try {
        user = normaliseAuthResult(await appAuth.authenticate(toFetchRequest(ctx)));
      } catch (error) {
        throw HttpExceptionError.from(error) ?? error;
      }
    } else if (controlPlane && isLoopbackRequest(ctx.get(LOOPBACK_HEADER))) {
      user = { identity: 'app', display_name: 'app', is_authenticated: true, permissions: [] };
    } else if (controlPlane) {
      if (!apiKey) throw new UnauthorizedError('Missing X-Api-Key header.');
      const owner = await verifiedKeyOwner(controlPlane, apiKey);
      if (!owner) throw new UnauthorizedError('Invalid API key.');
      user = { identity: owner, display_name: owner, is_authenticated: true, permissions: [] };
    }
    ctx.state.auth = { user } satisfies RequestAuth;
    await next();
  };
}
