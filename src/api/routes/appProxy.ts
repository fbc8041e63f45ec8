/**
 * `/v2/deployments/{id}/app/{path}`: the studio's door to a deployed app. The console is served by the control
 * plane and the apps by the gateway (another port, so another origin); rather than open the gateway to cross-origin
 * calls, the studio calls the app through this route, on the console's own origin: the tab's API key is checked
 * here first (a deployment of another tenant is a 404, as everywhere), then the request goes to the deployment's URL
 * marked `x-auth-scheme: graphx-studio`, so the app's auth sees a debugging-UI user (CONTRACT §6, §9) and verifies
 * the key again itself. Only the headers the agent-server API needs are passed, and the app's answer (tenant code)
 * is sandboxed: it can never run as a page of the console's origin.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type Router from '@koa/router';
import Joi from 'joi';
import type Koa from 'koa';
import { DeploymentRepository } from '../../db/repositories/deployments';
import { ConflictError, deploymentNotFound } from '@graphx/kit/errors';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/apiKeyAuth';
import type { HttpMethod, RouteRegistry } from '../routeKit';

export const STUDIO_AUTH_SCHEME = 'graphx-studio';
const APP_PREFIX = /^\/v2\/deployments\/[^/?]+\/app(?=\/|\?|$)/;
/** Request headers the agent-server API reads; cookies and Authorization never go to tenant code from here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'last-event-id', 'x-api-key', 'x-request-id'];
/** Response headers dropped: transport ones (fetch decoded the body) and any the app could use against our origin. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-encoding',
  'content-length',
  'set-cookie',
  'content-security-policy',
  'x-frame-options',
  'strict-transport-security',
  'refresh',
  'location',
]);
/** The app's answer is data for the studio's scripts, never a document of the console's origin. */
const SANDBOX_POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'";
const detail = Joi.object({ detail: Joi.string() });
const METHODS: HttpMethod[] = ['get', 'post', 'patch', 'put', 'delete'];

const appPathParams = Joi.object({
  deployment_id: Joi.string().guid().required(),
  app_path: Joi.string().allow('').max(2000).description('The agent-server API path, slashes included'),
});

/** The deployment's URL, for a deployment of this tenant that serves. */
async function appBaseUrl(deps: ApiDeps, tenantId: string, deploymentId: string): Promise<string> {
  const deployment = await new DeploymentRepository(deps.db).find(tenantId, deploymentId);
  if (!deployment) throw deploymentNotFound(deploymentId);
  if (!deployment.url) throw new ConflictError(`Deployment ${deployment.name} has no deployed revision yet.`);
  return deployment.url.replace(/\/+$/, '');
}

async function forward(ctx: Koa.ParameterizedContext, baseUrl: string): Promise<void> {
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = ctx.get(name);
    if (value) headers.set(name, value);
  }
  headers.set('x-auth-scheme', STUDIO_AUTH_SCHEME);
  const hasBody = ctx.state.body !== undefined && !['GET', 'HEAD'].includes(ctx.method);
  if (hasBody) headers.set('content-type', 'application/json');
  const aborted = new AbortController();
  ctx.res.once('close', () => aborted.abort());
  let answer: Response;
  try {
    answer = await fetch(baseUrl + (ctx.url.replace(APP_PREFIX, '') || '/'), {
      method: ctx.method,
      headers,
      body: hasBody ? JSON.stringify(ctx.state.body) : undefined,
      redirect: 'manual',
      signal: aborted.signal,
    });
  } catch {
    if (aborted.signal.aborted) return;
    ctx.status = 502;
    ctx.body = { detail: 'The deployment could not be reached.' };
    return;
  }
  ctx.status = answer.status;
  answer.headers.forEach((value, name) => {
    if (!DROPPED_RESPONSE_HEADERS.has(name) && !name.startsWith('access-control-')) ctx.set(name, value);
  });
  ctx.set('Content-Security-Policy', SANDBOX_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
  if (!answer.body) {
    ctx.body = null;
    return;
  }
  // Relayed by hand, not as ctx.body: a tab that leaves mid-stream is how a studio stops watching a run, not an error
  // to log. Either side ending ends the other (the app sees its stream's client go).
  ctx.respond = false;
  ctx.res.statusCode = answer.status;
  ctx.res.flushHeaders();
  pipeline(Readable.fromWeb(answer.body as NodeReadableStream), ctx.res, () => aborted.abort());
}

export function registerAppProxyRoutes(router: Router, registry: RouteRegistry, deps: ApiDeps): void {
  for (const method of METHODS) {
    registry.add<{ deployment_id: string }, unknown, unknown>(
      router,
      {
        method,
        path: '/v2/deployments/:deployment_id/app/{*app_path}',
        summary: `The deployed app's agent-server API for the studio (${method.toUpperCase()}, as a debugging-UI user)`,
        tags: ['deployments'],
        params: appPathParams,
        // Some agent-server calls post no body at all (a run's cancel): optional.
        body:
          method === 'get' || method === 'delete'
            ? undefined
            : Joi.any().optional().description('The agent-server request (JSON)'),
        // The answer is the app's (any status of the agent-server API): documented as the default response.
        responses: {
          default: { description: "The app's answer as it gave it (agent-server API), streamed (SSE included)" },
          404: { description: 'Not found', schema: detail },
          409: { description: 'Not deployed yet', schema: detail },
          502: { description: 'The app could not be reached', schema: detail },
        },
      },
      async (ctx, { params }) => {
        const baseUrl = await appBaseUrl(deps, tenantOf(ctx).tenantId, params.deployment_id);
        await forward(ctx, baseUrl);
      },
    );
  }
}
