/**
 * Routes are declared once with their Joi schemas: the same declaration validates requests and feeds the OpenAPI
 * description, so the two cannot drift.
 */
import type Router from '@koa/router';
import type Joi from 'joi';
import type Koa from 'koa';
import { rememberingValidator, validatePart } from '@graphx/kit/http/validation';
import type { AuthMode } from './middleware/apiKeyAuth';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: Joi.Schema;
  contentType?: string;
}

export interface RouteSpec<P = any, Q = any, B = any> {
  method: HttpMethod;
  /** Koa-router path, e.g. `/v2/deployments/:deployment_id`. */
  path: string;
  summary: string;
  tags: string[];
  /** `apiKey` (default): X-Api-Key required; `none`: public (browser redirects, health). */
  auth?: AuthMode;
  params?: Joi.ObjectSchema<P>;
  query?: Joi.ObjectSchema<Q>;
  body?: Joi.Schema<B>;
  /** Status → description (and optional schema) for the OpenAPI description. */
  /** By status; `default` for an answer relayed as it came (the studio's door to an app). */
  responses: Record<number, ResponseSpec> & { default?: ResponseSpec };
}

export interface ValidatedInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export type RouteHandler<P, Q, B> = (ctx: Koa.ParameterizedContext, input: ValidatedInput<P, Q, B>) => Promise<void>;

/** Every route declared so far, for /openapi.json. */
export class RouteRegistry {
  readonly routes: RouteSpec[] = [];

  /** `authenticators[mode]` runs before validation, so a request without credentials gets 401, not 422. */
  constructor(private readonly authenticators: Partial<Record<AuthMode, Koa.Middleware>>) {}

  /** Declares a route on `router`: validation of path, query and body happens before `handler` runs. */
  add<P, Q, B>(router: Router, spec: RouteSpec<P, Q, B>, handler: RouteHandler<P, Q, B>): void {
    this.routes.push(spec as RouteSpec);
    const authenticate = this.authenticators[spec.auth ?? 'apiKey'];
    if (!authenticate && (spec.auth ?? 'apiKey') !== 'none') throw new Error(`No authenticator for ${spec.auth}`);
    const middleware: Koa.Middleware[] = authenticate ? [authenticate] : [];
    const validParams = spec.params && rememberingValidator<P & object>(spec.params, 'path');
    const validQuery = spec.query && rememberingValidator<Q & object>(spec.query, 'query');
    router[spec.method](spec.path, ...middleware, async (ctx) => {
      const params = validParams ? validParams(ctx.params) : (ctx.params as P);
      const query = validQuery ? validQuery({ ...ctx.query }) : (ctx.query as Q);
      const body = spec.body ? validatePart<B>(spec.body, ctx.state.body, 'body') : (ctx.state.body as B);
      await handler(ctx, { params, query, body });
    });
  }
}
