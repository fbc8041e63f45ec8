/**
 * The one place that maps errors to HTTP. Domain errors become 4xx with a `detail`; a database that cannot be reached
 * (restarting after a crash, stopped, refusing connections) is a 503 with Retry-After, so clients retry; anything else
 * is a 500 with a request id, logged once here, never with a stack in the body.
 */
import type Koa from 'koa';
import {
  ConflictError,
  ForbiddenError,
  InputError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  ValidationError,
} from '../errors';
import { logger } from '../logger';

interface HttpErrorLike {
  status?: number;
  expose?: boolean;
  message: string;
}

/** Seconds a client is told to wait before retrying while the database is unavailable. */
const DATABASE_RETRY_AFTER_S = 5;

/**
 * True for errors that mean PostgreSQL cannot be reached right now, not that the request is wrong: connection refused
 * or cut, the server shutting down or still starting up (SQLSTATE 57P01-57P03, class 08), no pooled connection to be
 * had in time. The fault-injection test saw 500s for every request in the seconds an embedded PostgreSQL restarted.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (!candidate || typeof candidate !== 'object') return false;
  const code = typeof candidate.code === 'string' ? candidate.code : '';
  if (['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(code) || code.startsWith('08')) return true;
  if (candidate.name === 'KnexTimeoutError') return true;
  const message = typeof candidate.message === 'string' ? candidate.message : '';
  return /^Connection terminated( unexpectedly| due to connection timeout)?$/.test(message);
}

function toResponse(error: unknown): { status: number; detail: unknown } | null {
  if (error instanceof ValidationError) return { status: 422, detail: error.issues };
  if (error instanceof NotFoundError) return { status: 404, detail: error.message };
  if (error instanceof ConflictError) return { status: 409, detail: error.message };
  if (error instanceof InputError) return { status: 400, detail: error.message };
  if (error instanceof UnauthorizedError) return { status: 401, detail: error.message };
  if (error instanceof ForbiddenError) return { status: 403, detail: error.message };
  if (error instanceof PayloadTooLargeError) return { status: 413, detail: error.message };
  const httpError = error as HttpErrorLike;
  // koa's ctx.throw(4xx) errors are deliberate and safe to show.
  if (typeof httpError?.status === 'number' && httpError.status >= 400 && httpError.status < 500 && httpError.expose) {
    return { status: httpError.status, detail: httpError.message };
  }
  return null;
}

export function errorMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Koa and the router answer 404, 405 (with Allow) and 501 without a body; every error is `{"detail"}` JSON.
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null)) {
        const { status, message } = ctx;
        ctx.body = { detail: message || 'Error' };
        ctx.status = status; // assigning a body to an implicit 404 would turn it into 200
      }
    } catch (error) {
      const mapped = toResponse(error);
      if (mapped) {
        ctx.status = mapped.status;
        ctx.body = { detail: mapped.detail };
        if (mapped.status === 401) ctx.set('WWW-Authenticate', 'X-Api-Key');
        return;
      }
      if (isDatabaseUnavailable(error)) {
        logger.warn({ err: error, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'database unavailable');
        ctx.status = 503;
        ctx.set('Retry-After', String(DATABASE_RETRY_AFTER_S));
        ctx.body = { detail: 'The database is unavailable (restarting or unreachable); retry shortly.' };
        return;
      }
      logger.error({ err: error, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { detail: 'Internal server error' };
    }
  };
}
