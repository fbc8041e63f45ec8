/**
 * The worker's HTTP side (GRAPHX_WORKER_METRICS_PORT): `GET /metrics` (our series, then the Temporal SDK's own,
 * fetched from its loopback exporter so one scrape target has both), `GET /ready` and `GET /ok`.
 */
import { listen } from '@graphx/kit/net/listen';
import http from 'node:http';
import type { Registry } from 'prom-client';
import { writeReadiness, type Readiness } from '@graphx/kit/http/readiness';
import { logger } from '@graphx/kit/logger';

export interface WorkerMetricsServer {
  url: string;
  close: () => Promise<void>;
}

const SDK_SCRAPE_TIMEOUT_MS = 1_000;

/** Starts the server on host:port (0: a free port); resolves once it listens. */
export async function startWorkerMetricsServer(options: {
  host: string;
  port: number;
  registry: Registry;
  readiness: Readiness;
  /** The SDK exporter's `/metrics` URL, or null when the SDK exports nothing here. */
  sdkMetricsUrl: () => string | null;
}): Promise<WorkerMetricsServer> {
  const server = http.createServer((req, res) => {
    const answer = async () => {
      if (req.method !== 'GET') return send(res, 405, { detail: 'Only GET is served here.' });
      if (req.url === '/ok') return send(res, 200, { ok: true });
      if (req.url === '/ready') return writeReadiness(options.readiness, res);
      if (req.url === '/metrics') {
        const own = await options.registry.metrics();
        const sdk = await scrapeSdk(options.sdkMetricsUrl());
        res.writeHead(200, { 'Content-Type': options.registry.contentType });
        res.end(sdk ? `${own}\n${sdk}` : own);
        return;
      }
      return send(res, 404, { detail: 'Not found: this port serves /metrics, /ready and /ok.' });
    };
    answer().catch((error: unknown) => {
      logger.error({ err: error }, 'worker metrics request failed');
      send(res, 500, { detail: 'Internal server error' });
    });
  });
  const { url, close } = await listen(server, options.port, options.host);
  return { url, close };
}

/** The SDK's exposition, or '' when it is off or does not answer in time (our own series are served regardless). */
async function scrapeSdk(url: string | null): Promise<string> {
  if (!url) return '';
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(SDK_SCRAPE_TIMEOUT_MS) });
    return response.ok ? await response.text() : '';
  } catch (error) {
    logger.debug({ err: error }, 'Temporal SDK metrics did not answer');
    return '';
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
