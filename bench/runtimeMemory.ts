/**
 * Memory of one deployed app: one runtime process serving one graph (the echo graph), its RSS idle and after each of
 * two back-to-back soaks of 200 clients running threadless `/runs/stream` over keep-alive loopback connections. Each
 * reading follows `BENCH_SETTLE_SECONDS` (default 20) of idleness, as a deployed app has between bursts; the soak
 * lasts `BENCH_SOAK_SECONDS` (default 60). Prints figures; asserts nothing.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { findFreePort } from '@graphx/kit/net/ports';
import { oneRun, ROOT, startProcess, treeRssMb, type Server } from './runtimeProcess';

const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 20);
const SOAK_CLIENTS = 200;
const GRAPH_FILE = path.join(ROOT, 'test', 'fixtures', 'apps', 'runtime-echo', 'src', 'graph.ts');

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** `clients` loops of runs for `seconds`; failures are counted, not thrown. */
async function soak(server: Server, clients: number, seconds: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const deadline = performance.now() + seconds * 1000;
  let runs = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        await oneRun(agent, server.port).then(
          () => (runs += 1),
          () => (errors += 1),
        );
      }
    }),
  );
  agent.destroy();
  return { runsPerSecond: runs / seconds, errors };
}

/** A graphx.json with the one graph a typical deployment serves (the fixture's has seven, in three module kinds). */
function oneGraphApp(): string {
  const dir = path.join(ROOT, '.test-data', 'bench-app');
  fs.mkdirSync(dir, { recursive: true });
  const config = path.join(dir, 'graphx.json');
  const graph = path.relative(dir, GRAPH_FILE);
  fs.writeFileSync(config, JSON.stringify({ graphs: { agent: `./${graph}:graph` }, env: { ECHO_PREFIX: 'echo' } }));
  return config;
}

/** Starts the app on `databaseUri`, prints its RSS idle and after two soaks, and stops it. */
export async function benchRuntimeMemory(databaseUri: string): Promise<void> {
  const port = await findFreePort();
  const args = [path.join(ROOT, 'bin', 'graphx.js'), 'dev', '--config', oneGraphApp(), '--port', String(port)];
  const env = { DATABASE_URI: databaseUri, GRAPHX_LOG_LEVEL: 'warn', GRAPHX_RUNTIME_WORKERS: '1' };
  const server = await startProcess('graphx dev, 1 graph', process.execPath, args, env, port);
  try {
    console.log(
      `\nmemory of one deployed app (RSS of its process tree, MB), ${SOAK_CLIENTS} clients × ${SOAK_SECONDS} s soaks, read after ${SETTLE_SECONDS} s idle`,
    );
    await sleep(SETTLE_SECONDS);
    console.log(`idle                       ${treeRssMb(server.pid).toFixed(1).padStart(7)}`);
    for (const label of ['after soak 1', 'after soak 2']) {
      const result = await soak(server, SOAK_CLIENTS, SOAK_SECONDS);
      const atEnd = treeRssMb(server.pid);
      await sleep(SETTLE_SECONDS);
      console.log(
        `${label.padEnd(26)} ${treeRssMb(server.pid).toFixed(1).padStart(7)}   (at the soak's end ${atEnd.toFixed(1)}; ${result.runsPerSecond.toFixed(1)} runs/s, ${result.errors} errors)`,
      );
    }
  } finally {
    await server.stop();
  }
}
