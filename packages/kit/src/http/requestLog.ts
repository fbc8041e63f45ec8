/**
 * One JSON line per request through the process logger: method, route pattern, status, duration, request id and
 * tenant. Never the raw headers (they carry X-Api-Key) nor the query string (it can carry tokens).
 */
import type Koa from 'koa';
import type { Logger } from '../logger';
import { onResponseEnd, routeOf } from './metrics';

export interface RequestLogOptions {
  /** `info` on the control plane; the runtime uses `debug` (its stdout is the tenant's app log). */
  level?: 'info' | 'debug';
}

/** The fields of a request's log line. */
export interface RequestLogLine {
  method: string;
  route: string;
  path: string;
  status: number;
  durationMs: number;
  requestId: string | undefined;
  tenantId: string | undefined;
}

/** Koa middleware writing one line per request once its response has ended. Mount it after the request id. */
export function requestLogMiddleware(log: Logger, options: RequestLogOptions = {}): Koa.Middleware {
  const level = options.level ?? 'info';
  // The line is built here from named fields, none of them a secret (no headers, no query): the process logger's
  // redaction paths would find nothing in it, and walking them was half the cost of writing the line.
  const requestLog = log.child({}, { redact: [] });
  return async (ctx, next) => {
    if (!requestLog.isLevelEnabled(level)) return next();
    const started = process.hrtime.bigint();
    onResponseEnd(ctx.res, started, (seconds) => {
      const line: RequestLogLine = {
        method: ctx.method,
        route: routeOf(ctx),
        // The path without the query; route patterns hide ids, the path is what an operator greps for.
        path: ctx.path,
        status: ctx.status,
        durationMs: Math.round(seconds * 1e6) / 1e3,
        requestId: ctx.state.requestId as string | undefined,
        tenantId: (ctx.state.tenant as { tenantId?: string } | undefined)?.tenantId,
      };
      requestLog[level]({ request: line }, 'request');
    });
    await next();
  };
}
