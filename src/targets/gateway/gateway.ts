/**
 * The gateway: `/<deployment-name>/...` → one of the deployment's serving instances (round-robin), prefix stripped,
 * every request header passed through, the response streamed as it arrives (SSE flows event by event).
 *
 * Routes come from `local_instances` (status `serving`), so an API process and a separate worker process agree;
 * they are cached for `routeTtlMs`, and a rollout waits longer than that before stopping the old instances. A
 * connection refused (nothing was delivered, so any method) or reset before a response on an idempotent method is
 * retried on another instance with a fresh route: no request fails while a rollout switches.
 */
import { listen } from '@graphx/kit/net/listen';
import http from 'node:http';
import { answerClientErrorsWithJson } from '@graphx/kit/http/clientErrors';
import type { Db } from '../../db/knex';
import { createMetricsRegistry, HttpMetrics, onResponseEnd, UNMATCHED_ROUTE, writeMetrics } from '@graphx/kit/http/metrics';
import { logger } from '@graphx/kit/logger';
import { registerGatewayMetrics } from './gatewayMetrics';
import { RequestBody } from './requestBody';
import { destination, headersWithout, INSTANCE_ONLY_PATHS, tryInstances, upstreamHeaders, type Destination } from './destination';
import { RouteTable } from './routeTable';
import { passUpgrade } from './upgrades';

export interface GatewayOptions {
  db: Db;
  host: string;
  port: number;
  /** How long a route read from the database is reused. */
  routeTtlMs?: number;
  /** The largest request body forwarded to an app (GRAPHX_GATEWAY_MAX_BODY_BYTES); a larger one is a 413. */
  maxBodyBytes?: number;
  /** The gateway's public origin (GRAPHX_GATEWAY_PUBLIC_URL): the apps are told it (X-Forwarded-Host and -Proto). */
  publicUrl?: string | null;
}

export interface GatewayHandle {
  url: string;
  close: () => Promise<void>;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'upgrade']);
/** The gateway's own scrape path: a deployment name cannot start with `-`, so no app can shadow it. */
export const GATEWAY_METRICS_PATH = '/-/metrics';
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** As the Python Agent Server's default HTTP_MAX_REQUEST_BODY_BYTES (300 MB): what an app takes, the gateway passes. */
export const DEFAULT_GATEWAY_MAX_BODY_BYTES = 300 * 1024 * 1024;
/** How long the rest of a refused body is read (so the client sees the 413) before the connection is closed. */
const DISCARD_MS = 30_000;

/** Starts the gateway on host:port (0 = any free port); resolves once it listens. */
export async function startGateway(options: GatewayOptions): Promise<GatewayHandle> {
  const routes = new RouteTable(options.db, options.routeTtlMs ?? 500);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_GATEWAY_MAX_BODY_BYTES;
  const publicUrl = options.publicUrl ? new URL(options.publicUrl) : null;
  const registry = createMetricsRegistry('gateway');
  const metrics = new HttpMetrics(registry);
  registerGatewayMetrics(registry, options.db);
  const server = http.createServer({ noDelay: true }, (req, res) => {
    if (req.url === GATEWAY_METRICS_PATH && req.method === 'GET') {
      writeMetrics(registry, res).catch(() => sendDetail(res, 500, 'Metrics could not be collected.'));
      return;
    }
    observe(req, res, metrics);
    handle(routes, req, res, { maxBodyBytes, publicUrl }).catch((error: unknown) => {
      // A failure of the gateway itself (its database, a bug), not of the app: the operator needs to see it.
      logger.error({ err: error, component: 'gateway' }, 'the gateway could not route a request');
      if (!res.headersSent) sendDetail(res, 502, 'The deployment could not be reached.');
      else res.destroy();
    });
  });
  // WebSocket handshakes (the agent server's protocol-v2 transport) go through to an instance as raw bytes.
  server.on('upgrade', (req, socket, head) => passUpgrade(routes, req, socket, head, publicUrl));
  answerClientErrorsWithJson(server);
  // Streams (SSE runs) may stay open far longer than node's default request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  const { url, close } = await listen(server, options.port, options.host);
  return { url, close };
}

/**
 * Counts, times and logs the request once its response has ended. The route is `/<deployment>/*` for a deployment
 * that exists (known by `handle`) and `unmatched` otherwise, so unknown names cannot grow the series.
 */
function observe(req: http.IncomingMessage, res: http.ServerResponse, metrics: HttpMetrics): void {
  const started = process.hrtime.bigint();
  onResponseEnd(res, started, (seconds) => {
    const route = (res as RoutedResponse).graphxRoute ?? UNMATCHED_ROUTE;
    const method = req.method ?? 'GET';
    metrics.observe(method, route, res.statusCode, seconds);
    const incomingId = req.headers['x-request-id'];
    logger.info(
      {
        request: {
          method,
          route,
          status: res.statusCode,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          requestId: typeof incomingId === 'string' && SAFE_REQUEST_ID.test(incomingId) ? incomingId : undefined,
        },
        component: 'gateway',
      },
      'request',
    );
  });
}

type RoutedResponse = http.ServerResponse & { graphxRoute?: string };

async function handle(
  routes: RouteTable,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: { maxBodyBytes: number; publicUrl: URL | null },
): Promise<void> {
  const { maxBodyBytes } = options;
  const target = await destination(routes, req, options.publicUrl);
  if (!target) {
    sendDetail(res, 404, 'Not found.');
    return;
  }
  const { name, upstreamPath } = target;
  if (INSTANCE_ONLY_PATHS.test(upstreamPath)) {
    // An instance's metrics name its assistants and volumes: for the operator's scraper, not the public.
    sendDetail(res, 404, 'Not found.');
    return;
  }
  const tooLarge = () => refuseLargeBody(req, res, `Request body is larger than the gateway's limit of ${maxBodyBytes} bytes.`);
  if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
    tooLarge();
    return;
  }
  const body = new RequestBody(req, maxBodyBytes, (upstream) => {
    upstream?.destroy();
    tooLarge();
  });
  if (!target.route.exists) {
    sendDetail(res, 404, `Deployment ${name} not found.`);
    return;
  }
  (res as RoutedResponse).graphxRoute = `/${name}/*`;
  const result = await tryInstances(routes, target, async (port) => {
    const outcome = await forward(req, res, body, port, upstreamPath, target.forwarded);
    if (outcome === 'done' || body.exceeded) return 'done';
    return outcome === 'fail' || !body.replayable() ? 'fail' : 'retry';
  });
  if (result === 'no-instance') {
    sendDetail(res, 503, `Deployment ${name} has no running instance.`);
    return;
  }
  if (!res.headersSent) sendDetail(res, 502, `Deployment ${name} did not answer.`);
}

/** One attempt: 'done' once a response was relayed, 'retry' when the request can go to another instance. */
function forward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: RequestBody,
  port: number,
  upstreamPath: string,
  forwarded: Destination['forwarded'],
): Promise<'done' | 'retry' | 'fail'> {
  return new Promise((resolve) => {
    const upstream = http.request({
      host: '127.0.0.1',
      port,
      method: req.method,
      path: upstreamPath,
      headers: upstreamHeaders(req, port, forwarded),
      setHost: false,
      agent: false, // A fresh connection per request: a pooled socket to an instance being drained would reset.
    });
    let relayed: http.IncomingMessage | null = null;
    upstream.on('socket', (socket) => socket.setNoDelay(true));
    upstream.on('response', (response) => {
      relayed = response;
      res.writeHead(response.statusCode ?? 502, response.statusMessage, headersWithout(response.rawHeaders, HOP_BY_HOP));
      res.flushHeaders();
      response.pipe(res);
      response.on('error', () => res.destroy());
      // The app answered without reading the whole body (a 413): the rest is read and dropped, so the client's
      // keep-alive connection stays in step instead of stalling on a body nobody reads.
      response.on('end', () => body.discardRest(upstream));
      resolve('done');
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (relayed) {
        // An app may answer before reading the whole body (413) and close: sending the rest then fails, but the
        // answer it gave still goes to the client. Only a response cut short is a broken relay.
        body.discardRest(upstream);
        if (!relayed.complete) res.destroy();
        return;
      }
      body.detach(upstream);
      const code = error.code ?? '';
      const retryable =
        NOT_DELIVERED.has(code) || (IDEMPOTENT.has(req.method ?? '') && (code === 'ECONNRESET' || code === 'EPIPE'));
      resolve(retryable ? 'retry' : 'fail');
    });
    // The client went away: close the upstream too, so the app sees its stream cancelled.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    body.attach(upstream);
  });
}

/**
 * A 413 while the client may still be sending: a lingering close, as nginx does. The whole answer (with its length)
 * is written at once, so the client has it; the response is ended only when the body has been read and dropped (or
 * after DISCARD_MS), because ending it earlier on a `Connection: close` request destroys the socket and the client,
 * still writing, gets EPIPE/ECONNRESET instead of the answer.
 */
function refuseLargeBody(req: http.IncomingMessage, res: http.ServerResponse, detail: string): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ detail });
  res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.write(body);
  const timer = setTimeout(() => {
    res.end();
    req.socket.destroy();
  }, DISCARD_MS).unref();
  const done = () => {
    clearTimeout(timer);
    res.end();
  };
  if (req.complete) done();
  else {
    req.once('end', done);
    req.once('close', done);
    req.resume();
  }
}

function sendDetail(res: http.ServerResponse, status: number, detail: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ detail }));
}
