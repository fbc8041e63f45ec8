/**
 * A small closed-loop HTTP load generator over node:http with keep-alive: `connections` loops, each sending its next
 * request when the previous answer has been read. It runs in a worker thread (see `measure`) so its CPU does not
 * share an event loop with the server it measures.
 */
import http from 'node:http';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface LoadSpec {
  port: number;
  /** Paths requested in turn (e.g. different ids), so no single row stays hot in a cache. */
  paths: string[];
  headers: Record<string, string>;
  /** GET unless set; `body` (JSON text) is sent with every request. */
  method?: string;
  body?: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = Date.now();
  const measureFrom = started + spec.warmupMs;
  const end = measureFrom + spec.durationMs;
  const once = () =>
    new Promise<void>((resolve) => {
      const path = spec.paths[next++ % spec.paths.length] as string;
      const sent = process.hrtime.bigint();
      const headers =
        spec.body === undefined ? spec.headers : { ...spec.headers, 'content-length': String(Buffer.byteLength(spec.body)) };
      const request = http.request(
        { host: '127.0.0.1', port: spec.port, path, agent, method: spec.method, headers },
        (response) => {
          response.resume();
          response.on('end', () => {
            const now = Date.now();
            if (now >= measureFrom && now < end) {
              latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
              if (response.statusCode !== 200) errors += 1;
            }
            resolve();
          });
        },
      );
      request.on('error', () => {
        errors += 1;
        resolve();
      });
      request.end(spec.body);
    });
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (Date.now() < end) await once();
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / (spec.durationMs / 1000),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    errors,
  };
}

/** Runs one measurement in a worker thread and returns its figures. */
export function measure(spec: LoadSpec): Promise<LoadResult> {
  const self = path.resolve(__filename);
  const code = `import(${JSON.stringify(require.resolve('tsx'))}).then(() => require(${JSON.stringify(self)}))`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: spec });
    worker.once('message', (result: LoadResult) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

if (!isMainThread && parentPort && workerData?.paths) {
  const port = parentPort;
  void run(workerData as LoadSpec).then((result) => port.postMessage(result));
}
