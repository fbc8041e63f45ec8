/**
 * Threadless `POST /runs/stream` of the deterministic echo graph (test/fixtures/apps/runtime-echo, `updates` mode)
 * against (a) this runtime (`graphx dev`, PostgreSQL, run records persisted), (b) the LangGraph JS dev server
 * (`langgraphjs dev` from @langchain/langgraph-cli), (c) a bare Node HTTP server writing the same SSE bytes.
 * 1, 8 and 32 concurrent clients over keep-alive loopback connections. Prints runs/s, p50 time to first byte, p50
 * whole-run time (until the stream closes) and server CPU per run (the server's process tree, from /proc).
 * Then the memory of one deployed app (runtimeMemory.ts). Prints figures; asserts nothing.
 */
import http from 'node:http';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { benchRuntimeMemory } from './runtimeMemory';
import { benchRuntimeBackground } from './runtimeBackground';
import { benchRuntimeProtocol } from './runtimeProtocol';
import { libraryAlone, type LibraryAlonePoint } from './runtimeLibraryAlone';
import {
  BODY,
  oneRun,
  peerServer,
  ROOT,
  runtimeNode,
  startProcess,
  treeCpuMs,
  type BenchNode,
  type Server,
} from './runtimeProcess';

const APP_CONFIG = path.join(ROOT, 'test', 'fixtures', 'apps', 'runtime-echo', 'graphx.json');
const SECONDS_PER_POINT = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = [1, 8, 32];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function measure(server: Server, clients: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  for (let index = 0; index < clients * 2; index += 1) await oneRun(agent, server.port); // warm up
  const firstBytes: number[] = [];
  const totals: number[] = [];
  const cpuBefore = treeCpuMs(server.pid);
  const started = performance.now();
  const deadline = started + SECONDS_PER_POINT * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const [firstByte, total] = await oneRun(agent, server.port);
        firstBytes.push(firstByte);
        totals.push(total);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = treeCpuMs(server.pid) - cpuBefore;
  agent.destroy();
  return {
    runsPerSecond: totals.length / seconds,
    firstByteP50: median(firstBytes),
    totalP50: median(totals),
    cpuPerRun: cpuMs / totals.length,
  };
}

async function recordBareBytes(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
  });
  return response.text();
}

const BARE_SERVER = `
const http = require('node:http');
const crypto = require('node:crypto');
const [port, template] = [Number(process.argv[1]), process.argv[2]];
http.createServer((req, res) => {
  if (req.url === '/ok') { res.end('{"ok":true}'); return; }
  req.resume();
  req.on('end', () => {
    const runId = crypto.randomUUID();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'content-location': '/runs/' + runId });
    for (const frame of template.split('\\n\\n').filter(Boolean)) res.write(frame.replace('RUN_ID', runId) + '\\n\\n');
    res.end();
  });
}).listen(port, '127.0.0.1');
`;

/** The graph's own cost in a process of its own (runtimeLibraryAlone.ts), at each concurrency. */
function measureLibraryAlone(node: BenchNode): Promise<LibraryAlonePoint[] | string> {
  return libraryAlone(path.join(path.dirname(APP_CONFIG), 'src', 'graph.ts'), SECONDS_PER_POINT, CONCURRENCY, node.binary);
}

/** The library alone's figures, and how much graphx adds to them. */
function printLibraryAlone(points: LibraryAlonePoint[] | string, cpuPerRun: Map<string, number>, ours: string | undefined): void {
  if (typeof points === 'string') {
    console.log(`library alone: could not run (${points})`);
    return;
  }
  const line = (format: (point: LibraryAlonePoint) => string) =>
    points.map((point) => `${point.clients} clients ${format(point)}`).join(', ');
  console.log(
    `library alone (graph.stream in one process with a store, no HTTP, no database), runs/s: ${line((p) => p.runsPerSecond.toFixed(1))}`,
  );
  console.log(`library alone, CPU ms per run: ${line((p) => p.cpuPerRun.toFixed(2))}`);
  console.log(`library alone without a store, runs/s: ${line((p) => p.withoutStore.runsPerSecond.toFixed(1))}`);
  console.log(`library alone without a store, CPU ms per run: ${line((p) => p.withoutStore.cpuPerRun.toFixed(2))}`);
  const added = (point: LibraryAlonePoint) => ((cpuPerRun.get(`${ours} ${point.clients}`) ?? NaN) - point.cpuPerRun).toFixed(2);
  console.log(`server CPU ms per run of ${ours} above the library alone: ${line(added)}`);
}

/** Runs the benchmark and prints one line per server and concurrency. */
export async function benchRuntime(): Promise<void> {
  const adminUrl = process.env.GRAPHX_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const databaseName = `gx_bench_${Date.now().toString(36)}`;
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${databaseName}"`);
  const running: Server[] = [];
  try {
    // One runtime process, then two behind the same port (GRAPHX_RUNTIME_WORKERS): a run's CPU is mostly the graph
    // library's, so runs/s beyond one core needs a second process. Each server runs alone while it is measured (started
    // just before, stopped just after): an idle competitor still uses CPU (the peer's queue workers and file watcher
    // 10-56 ms per second here), which a machine of two cores takes from the server being measured.
    const databaseUri = adminUrl.replace(/\/[^/]*$/, `/${databaseName}`);
    const node = await runtimeNode();
    let template = '';
    const ours =
      (workers: number, binary = node.binary) =>
      async () => {
        const port = await findFreePort();
        const args = [path.join(ROOT, 'bin', 'graphx.js'), 'dev', '--config', APP_CONFIG, '--port', String(port)];
        const env = { DATABASE_URI: databaseUri, GRAPHX_LOG_LEVEL: 'warn', GRAPHX_RUNTIME_WORKERS: String(workers) };
        const name = `graphx dev, ${workers} proc${binary === node.binary ? '' : `, host Node ${process.version.split('.')[0]}`}`;
        const server = await startProcess(name, binary, args, env, port);
        // The bare server writes the bytes ours wrote for one run.
        template ||= (await recordBareBytes(port)).replace(
          /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/,
          'RUN_ID',
        );
        return server;
      };
    const starters: Array<[string, () => Promise<Server | string>]> = [
      ['graphx dev, 1 proc', ours(1)],
      ['graphx dev, 2 proc', ours(2)],
      [
        'langgraphjs dev',
        () => peerServer({ agent: `${path.join(path.dirname(APP_CONFIG), 'src', 'graph.ts')}:graph` }, 'bench-peer'),
      ],
      [
        'bare node http',
        async () => {
          const port = await findFreePort();
          return startProcess('bare node http', node.binary, ['-e', BARE_SERVER, String(port), template], {}, port);
        },
      ],
    ];
    // The process runner runs an app on the host's Node: its figure, for reference, when the image's Node differs.
    if (node.binary !== process.execPath) starters.splice(1, 0, ['graphx dev, 1 proc, host', ours(1, process.execPath)]);

    console.log(`\nthreadless /runs/stream, updates mode, ${SECONDS_PER_POINT} s per point, each server alone`);
    console.log(`every server and the library alone on ${node.label}`);
    console.log('server                             clients   runs/s   p50 first byte ms   p50 whole run ms   server CPU ms/run');
    const runsPerSecond = new Map<string, number>();
    const cpuPerRun = new Map<string, number>();
    const names: string[] = [];
    // Measured right after graphx's one process, not minutes later: this machine drifts ±15 % within minutes.
    let libraryPoints: LibraryAlonePoint[] | string = 'not measured';
    for (const [name, start] of starters) {
      const server = await start();
      if (typeof server === 'string') {
        console.log(`${name}: ${server}; benching the rest`);
        continue;
      }
      running.push(server);
      names.push(server.name);
      for (const clients of CONCURRENCY) {
        const result = await measure(server, clients);
        runsPerSecond.set(`${server.name} ${clients}`, result.runsPerSecond);
        cpuPerRun.set(`${server.name} ${clients}`, result.cpuPerRun);
        console.log(
          `${server.name.padEnd(34)} ${String(clients).padStart(7)} ${result.runsPerSecond.toFixed(1).padStart(8)} ${result.firstByteP50.toFixed(2).padStart(19)} ${result.totalP50.toFixed(2).padStart(18)} ${result.cpuPerRun.toFixed(2).padStart(19)}`,
        );
      }
      await running.pop()!.stop();
      if (names.length === 1) libraryPoints = await measureLibraryAlone(node);
    }
    // The issue's target, from this one run: graphx (one process) against the peer at each concurrency.
    const peerName = names.find((name) => name.startsWith('langgraphjs'));
    if (peerName) {
      const ratios = CONCURRENCY.map((clients) => {
        const ratio = (runsPerSecond.get(`${names[0]} ${clients}`) ?? NaN) / (runsPerSecond.get(`${peerName} ${clients}`) ?? NaN);
        return `${clients} clients ${ratio.toFixed(1)}x`;
      });
      console.log(`\nruns/s of ${names[0]} over ${peerName}: ${ratios.join(', ')} (target: >= 10x at 8 and 32)`);
    }
    const cpu = CONCURRENCY.map((clients) => `${clients} clients ${cpuPerRun.get(`${names[0]} ${clients}`)?.toFixed(2)}`);
    console.log(`server CPU ms per run of ${names[0]}: ${cpu.join(', ')} (target: <= 2 ms under load)`);
    printLibraryAlone(libraryPoints, cpuPerRun, names[0]);
    const persisted = new PgClient({ connectionString: databaseUri });
    await persisted.connect();
    const count = (await persisted.query('SELECT count(*)::int AS count FROM graphx_runs')).rows[0].count;
    await persisted.end();
    console.log(`\nrun records persisted by graphx: ${count}`);
    await benchRuntimeProtocol(databaseUri);
    await benchRuntimeBackground(databaseUri);
    await benchRuntimeMemory(databaseUri);
  } finally {
    for (const server of running) await server.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  }
}

if (require.main === module) {
  benchRuntime().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
