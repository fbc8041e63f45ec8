/**
 * Reads JSON bodies up to a limit (the control plane's 1 MiB; a deployed app's HTTP_MAX_REQUEST_BODY_BYTES). Malformed
 * JSON is a 422 `json_invalid` (pydantic's shape), a larger body 413,
 * NUL characters and nesting deeper than MAX_JSON_DEPTH a 422.
 * Written here rather than taken from koa-bodyparser because both answers must be in the contract's shape.
 */
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { PayloadTooLargeError, ValidationError } from '../errors';
import { unstorableIssue } from './validation';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * With `deferErrors` (a deployed app with custom routes, whose bodies need not be JSON), a body that is not JSON is
 * left in `ctx.state.rawBody` and its error in `ctx.state.bodyError`, thrown later if no custom route takes the request.
 */
export function jsonBodyMiddleware(options: { deferErrors?: boolean; maxBytes?: number } = {}): Koa.Middleware {
  const limit = options.maxBytes ?? MAX_BODY_BYTES;
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
    let raw: string;
    try {
      raw = await getRawBody(ctx.req, {
        limit,
        encoding: 'utf8',
        length: ctx.get('content-length') || undefined,
      });
    } catch (error) {
      if ((error as { type?: string }).type === 'entity.too.large') {
        throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
      }
      throw error;
    }
    // Kept as read: custom routes of an app read it, and a webhook's signature is over these exact bytes.
    ctx.state.rawBody = raw;
    if (raw.trim() === '') {
      ctx.state.body = undefined;
      return next();
    }
    let body: unknown;
    let problem: ValidationError | null = null;
    try {
      body = JSON.parse(raw);
      // Every body, validated by a route schema or not, is checked once here for what no column can store.
      const unstorable = unstorableIssue(body, 'body');
      if (unstorable) problem = new ValidationError([unstorable]);
    } catch (error) {
      problem = new ValidationError([
        { loc: ['body', 0], msg: `JSON decode error: ${(error as Error).message}`, type: 'json_invalid' },
      ]);
    }
    if (problem && !options.deferErrors) throw problem;
    ctx.state.body = problem ? undefined : body;
    ctx.state.bodyError = problem ?? undefined;
    return next();
  };
}
