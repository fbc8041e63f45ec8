/**
 * Prometheus metrics every graphx server shares: one registry per server (a process can hold the API, the gateway and
 * a worker at once, and each must answer its own scrape), HTTP request counts and latencies by *route pattern*, never
 * by raw path (ids in paths would make one series per id), and the `/metrics` answer.
 */
import type http from 'node:http';
import type Koa from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from './promClient';

/** Latency buckets in seconds: 1 ms to 10 s, where API and run latencies live. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request no route matched (404s, scanners): one series, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * How often `nodejs_eventloop_lag_*` samples the event loop's delay (prom-client's default: every 10 ms). Each sample
 * is a timer waking the process: at 10 ms, 100 wakeups a second were most of what an idle agent server spends (a machine
 * runs many idle instances; decisions.md "The event loop's delay is sampled every 100 ms"). A stall of 100 ms or more
 * always shows in the histogram, a shorter one in proportion to its length.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** A registry with the process metrics (`process_*`, `nodejs_*`) and `server` on every series. */
export function createMetricsRegistry(server: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ server });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/** Request counter and latency histogram of one server. */
export class HttpMetrics {
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly duration: Histogram<'method' | 'route' | 'status'>;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'graphx_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'graphx_http_request_duration_seconds',
      help: 'Time from request to the end of the response (a stream: until it closes), by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  /** Records one finished request. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }
}

/** The matched @koa/router pattern (`/v2/deployments/:deployment_id`), or `unmatched`. */
export function routeOf(ctx: Koa.Context): string {
  const matched = (ctx as Koa.Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}

/**
 * Calls `done(seconds)` once the response is over: after its last byte or when the client went away. A streamed
 * response (SSE, `ctx.respond = false`) is timed to its end, not to the handler's return.
 */
export function onResponseEnd(res: http.ServerResponse, started: bigint, done: (seconds: number) => void): void {
  res.once('close', () => done(Number(process.hrtime.bigint() - started) / 1e9));
}

/**
 * Koa middleware counting and timing every request. Mount it before the error middleware so the status it sees is
 * the one the client got.
 */
export function httpMetricsMiddleware(metrics: HttpMetrics): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    onResponseEnd(ctx.res, started, (seconds) => metrics.observe(ctx.method, routeOf(ctx), ctx.status, seconds));
    await next();
  };
}

/** Answers a scrape with the registry in the Prometheus text format. */
export async function writeMetrics(registry: Registry, res: http.ServerResponse): Promise<void> {
  const body = await registry.metrics();
  res.writeHead(200, { 'Content-Type': registry.contentType });
  res.end(body);
}

/** Koa handler of `GET /metrics`. */
export function metricsHandler(registry: Registry): Koa.Middleware {
  return async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
}
