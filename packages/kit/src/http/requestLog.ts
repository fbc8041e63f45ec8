/**
 * One JSON line per request through the process logger: method, route pattern, status, duration, request id and
 * tenant. Never the raw headers (they carry X-Api-Key) nor the query string (it can carry tokens).
 */
import type Koa from 'koa';
import type { Logger } from '../logger';
import { type HttpMetrics, onResponseEnd, routeOf } from './metrics';

export interface RequestLogOptions {
  /** `info` on the control plane; the runtime uses `debug` (its stdout is the tenant's app log). */
  level?: 'info' | 'debug';
  /**
   * The server's request metrics, observed from the same end-of-response hook as the line: one listener per request
   * instead of two (the log line and the metrics were a tenth of a control-plane read's CPU). Observed whatever the
   * log level.
   */
  metrics?: HttpMetrics;
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

/**
 * Koa middleware writing one line per request (and observing `options.metrics`) once its response has ended, so with
 * the status the client got. Mount it after the request id, before the error middleware.
 */
export function requestLogMiddleware(log: Logger, options: RequestLogOptions = {}): Koa.Middleware {
  const level = options.level ?? 'info';
  const { metrics } = options;
  // The line is built here from named fields, none of them a secret (no headers, no query): the process logger's
  // redaction paths would find nothing in it, and walking them was half the cost of writing the line.
  const requestLog = log.child({}, { redact: [] });
  return async (ctx, next) => {
    const logged = requestLog.isLevelEnabled(level);
    if (!logged && !metrics) return next();
    const started = process.hrtime.bigint();
    onResponseEnd(ctx.res, started, (seconds) => {
      const route = routeOf(ctx);
      metrics?.observe(ctx.method, route, ctx.status, seconds);
      if (!logged) return;
      const line: RequestLogLine = {
        method: ctx.method,
        route,
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
