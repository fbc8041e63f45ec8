/**
 * Background runs and join streams, against this runtime (`graphx dev`, one and two processes) and the LangGraph JS
 * dev server (`langgraphjs dev`), over loopback, each point bounded by `BENCH_SECONDS` (default 5) and every request
 * by a timeout. Prints figures; asserts nothing.
 * 1. Throughput: each client loops new thread → `POST /threads/{id}/runs` (echo graph) → `GET …/join`; runs/s
 *    completed and create→completed times. A join that answers before the run's answer is in the state is an error.
 * 2. Join stream: each client loops new thread → background run of the ticker graph (test/fixtures/bench/tickerGraph.ts,
 *    custom events stamped with the time they were written) → `GET /threads/{id}/runs/{run_id}/stream` at once;
 *    or once the run is executing; the lag of each event (written → received by the joined client) and the time from
 *    the join request to the first event (joined at once, this includes the run's pick-up from the queue). Streams
 *    that carried none of the run's events, or only some (due joined at once, with `Last-Event-ID: -1`), are counted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { peerServer, ROOT, runtimeNode, startProcess, type Server } from './runtimeProcess';

const SECONDS_PER_POINT = Number(process.env.BENCH_SECONDS ?? 5);
const THROUGHPUT_CLIENTS = [1, 8, 32];
const JOIN_CLIENTS = [1, 8];
const REQUEST_TIMEOUT_MS = 30_000;
const TICKS = 20; // as test/fixtures/bench/tickerGraph.ts writes
const GRAPHS = {
  agent: `${path.join(ROOT, 'test', 'fixtures', 'apps', 'runtime-echo', 'src', 'graph.ts')}:graph`,
  ticker: `${path.join(ROOT, 'test', 'fixtures', 'bench', 'tickerGraph.ts')}:graph`,
};
const INPUT = { messages: [{ role: 'user', content: 'hi' }] };

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number) : NaN;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const wallClockMs = () => performance.timeOrigin + performance.now();

async function call(port: number, method: string, route: string, body?: unknown): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${method} ${route.replace(/[0-9a-f-]{36}/g, '{id}')}: HTTP ${response.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

/** `clients` loops of `once` until the point's deadline; failures are counted (the first one kept), not thrown. */
async function loop(clients: number, once: () => Promise<void>) {
  const failures: string[] = [];
  const started = performance.now();
  const deadline = started + SECONDS_PER_POINT * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        await once().catch(async (error: Error) => {
          failures.push(error.message);
          await sleep(50); // a failing route must not become a busy loop
        });
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, errors: failures.length, firstError: failures[0] };
}

/** Two runs first (graph loading, connection pools); their failures show again in the measured loop. */
async function warmUp(once: () => Promise<void>) {
  for (let index = 0; index < 2; index += 1) await once().catch(() => undefined);
}

async function backgroundRun(port: number, assistantId: string, extra: Record<string, unknown> = {}) {
  const thread = await call(port, 'POST', '/threads', {});
  const created = performance.now();
  const run = await call(port, 'POST', `/threads/${thread.thread_id}/runs`, { assistant_id: assistantId, ...extra });
  return { threadId: thread.thread_id as string, runId: run.run_id as string, created };
}

async function throughput(port: number, clients: number) {
  const times: number[] = [];
  const once = async () => {
    const { threadId, runId, created } = await backgroundRun(port, 'agent', { input: INPUT });
    const values = await call(port, 'GET', `/threads/${threadId}/runs/${runId}/join`);
    if (!Array.isArray(values?.messages) || values.messages.length < 3) {
      throw new Error(`join answered before the run's answer was in the state: ${JSON.stringify(values).slice(0, 200)}`);
    }
    times.push(performance.now() - created);
  };
  await warmUp(once);
  times.length = 0;
  const result = await loop(clients, once);
  return { ...result, runsPerSecond: times.length / result.seconds, p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/** The SSE frames of a response as they arrive: [event, data]. */
async function* frames(response: Response): AsyncGenerator<[string, string]> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        frame
          .split('\n')
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).trimStart())
          .join('\n');
      yield [field('event'), field('data')];
    }
  }
}

/** Polls the run until an executor has taken it (bounded by the request timeout). */
async function untilRunning(port: number, threadId: string, runId: string) {
  const deadline = performance.now() + REQUEST_TIMEOUT_MS;
  while ((await call(port, 'GET', `/threads/${threadId}/runs/${runId}`)).status === 'pending') {
    if (performance.now() > deadline) throw new Error('the run stayed pending');
    await sleep(2);
  }
}

/** `whenRunning`: join once the run is executing (a reload mid-run), else right after creating it (useStream). */
async function joinStream(port: number, clients: number, whenRunning: boolean) {
  const lags: number[] = [];
  const firstEvents: number[] = [];
  let [runs, empty, partial] = [0, 0, 0];
  const once = async () => {
    const { threadId, runId } = await backgroundRun(port, 'ticker', {
      input: {},
      stream_mode: ['custom'],
      stream_resumable: true,
    });
    if (whenRunning) await untilRunning(port, threadId, runId);
    const joined = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/threads/${threadId}/runs/${runId}/stream`, {
      // Joined at once, the client asks for every event (-1): none may be missing. Joined later, it asks for what
      // follows, so the events written before the join are rightly absent.
      headers: whenRunning ? {} : { 'last-event-id': '-1' },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (!response.ok)
      throw new Error(`GET /threads/{id}/runs/{id}/stream: HTTP ${response.status} ${(await response.text()).slice(0, 200)}`);
    let ticks = 0;
    for await (const [event, data] of frames(response)) {
      if (!event.startsWith('custom')) continue;
      const received = wallClockMs();
      if (ticks === 0) firstEvents.push(performance.now() - joined);
      lags.push(received - (JSON.parse(data) as { at: number }).at);
      ticks += 1;
    }
    runs += 1;
    if (ticks === 0) empty += 1;
    else if (ticks < TICKS) partial += 1;
  };
  await warmUp(once);
  [lags.length, firstEvents.length, runs, empty, partial] = [0, 0, 0, 0, 0];
  const result = await loop(clients, once);
  return {
    ...result,
    runs,
    empty,
    partial,
    lagP50: percentile(lags, 0.5),
    lagP99: percentile(lags, 0.99),
    firstP50: percentile(firstEvents, 0.5),
    firstP99: percentile(firstEvents, 0.99),
  };
}

const fixed = (value: number, width: number) => value.toFixed(2).padStart(width);

async function startServers(databaseUri: string): Promise<Server[]> {
  const servers: Server[] = [];
  const config = path.join(ROOT, '.test-data', 'bench-background', 'graphx.json');
  fs.mkdirSync(path.dirname(config), { recursive: true });
  const relative = Object.fromEntries(
    Object.entries(GRAPHS).map(([name, target]) => [name, `./${path.relative(path.dirname(config), target)}`]),
  );
  fs.writeFileSync(config, JSON.stringify({ graphs: relative, env: { ECHO_PREFIX: 'echo' } }));
  for (const workers of [1, 2]) {
    const port = await findFreePort();
    const args = [path.join(ROOT, 'bin', 'graphx.js'), 'dev', '--config', config, '--port', String(port)];
    const env = { DATABASE_URI: databaseUri, GRAPHX_LOG_LEVEL: 'warn', GRAPHX_RUNTIME_WORKERS: String(workers) };
    servers.push(await startProcess(`graphx dev, ${workers} proc`, (await runtimeNode()).binary, args, env, port));
  }
  const peer = await peerServer(GRAPHS, 'bench-background-peer');
  if (typeof peer === 'string') console.log(`peer (langgraphjs dev): ${peer}; benching the rest`);
  else servers.push(peer);
  return servers;
}

/** Prints both tables; on `databaseUri`, or on a database of its own (BENCH_ONLY=runtime-background). */
export async function benchRuntimeBackground(databaseUri?: string): Promise<void> {
  const adminUrl = process.env.GRAPHX_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const databaseName = `gx_bench_bg_${Date.now().toString(36)}`;
  const admin = databaseUri ? null : new PgClient({ connectionString: adminUrl });
  await admin?.connect();
  await admin?.query(`CREATE DATABASE "${databaseName}"`);
  const servers: Server[] = [];
  try {
    servers.push(...(await startServers(databaseUri ?? adminUrl.replace(/\/[^/]*$/, `/${databaseName}`))));
    console.log(
      `\nbackground runs: new thread, POST /threads/{id}/runs (echo graph), GET …/join; ${SECONDS_PER_POINT} s per point, on ${(await runtimeNode()).label}`,
    );
    console.log('server                   clients   runs/s   p50 create→done ms   p99 create→done ms   errors');
    for (const server of servers) {
      for (const clients of THROUGHPUT_CLIENTS) {
        const r = await throughput(server.port, clients);
        console.log(
          `${server.name.padEnd(24)} ${String(clients).padStart(7)} ${r.runsPerSecond.toFixed(1).padStart(8)} ${fixed(r.p50, 20)} ${fixed(r.p99, 20)} ${String(r.errors).padStart(8)}${r.firstError ? `   first: ${r.firstError}` : ''}`,
        );
      }
    }
    console.log(
      `\njoin stream: GET /threads/{id}/runs/{run_id}/stream of a background run of the ticker graph (${TICKS} custom events 10 ms apart), joined right after its creation with Last-Event-ID -1 (every event due) or once it runs (the events that follow due); ${SECONDS_PER_POINT} s per point`,
    );
    console.log(
      'server                   joined   clients   runs   no event   some missing   p50 event lag ms   p99 event lag ms   p50 join→1st event ms   p99 join→1st event ms   errors',
    );
    for (const server of servers) {
      for (const [clients, whenRunning] of JOIN_CLIENTS.flatMap(
        (count) =>
          [
            [count, false],
            [count, true],
          ] as const,
      )) {
        const r = await joinStream(server.port, clients, whenRunning);
        console.log(
          `${server.name.padEnd(24)} ${(whenRunning ? 'running' : 'at once').padEnd(7)} ${String(clients).padStart(9)} ${String(r.runs).padStart(6)} ${String(r.empty).padStart(10)} ${String(r.partial).padStart(14)} ${fixed(r.lagP50, 18)} ${fixed(r.lagP99, 18)} ${fixed(r.firstP50, 23)} ${fixed(r.firstP99, 23)} ${String(r.errors).padStart(8)}${r.firstError ? `   first: ${r.firstError}` : ''}`,
        );
      }
    }
  } finally {
    for (const server of servers) await server.stop();
    await admin?.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin?.end();
  }
}
