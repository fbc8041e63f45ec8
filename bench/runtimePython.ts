/**
 * Python graphs: threadless `POST /runs/stream` (updates mode) of the echo graph written in JavaScript and in Python,
 * both served by one `graphx dev` (test/fixtures/apps/runtime-mixed), and the Python one served by LangChain's own
 * Python dev server (`langgraph dev` of `langgraph-cli[inmem]`, installed from the package index into .test-data, as
 * its licence allows for local use); 8 and 32 clients. Prints runs/s, p50 whole run and server CPU per run, the
 * executor hop (Python minus JavaScript on the same server, one client), a Python app's cold start (process start
 * → /ok, its environment built) and its idle RSS (the process tree: Node and the executor), both as a runner starts
 * it (`graphx runtime` with an instance's environment, not `graphx dev`, whose studio and defaults a deployed app
 * does not have). Asserts nothing.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { RUNTIME_PROCESS_ENV } from '@graphx/contract/image';
import { cachedNodeBinary } from '@graphx/kit/os/nodeRelease';
import { semiSpaceMb } from '../src/pipeline/runtimeEnv';
import { oneRun, ROOT, startProcess, treeCpuMs, treeRssMb, type Server } from './runtimeProcess';

const run = promisify(execFile);
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'apps');
const SECONDS_PER_POINT = Number(process.env.BENCH_SECONDS ?? 5);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const body = (assistantId: string) =>
  JSON.stringify({ assistant_id: assistantId, input: { messages: [{ role: 'user', content: 'hi' }] }, stream_mode: 'updates' });

/**
 * Idle as a deployed app that nobody calls is: after the quiet-window collection (packages/runtime/src/idleMemory.ts,
 * 10 s by default) has run once, or 30 s.
 */
/** CPU time the idle process tree spends per second (timers, lease renewals, polls), over `seconds`. */
async function idleCpuMsPerSecond(server: Server, seconds = 10): Promise<number> {
  const before = treeCpuMs(server.pid);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return (treeCpuMs(server.pid) - before) / seconds;
}

async function settledIdle(server: Server): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    if (/^graphx_runtime_idle_collections_total\{[^}]*\} [1-9]/m.test(metrics)) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

async function measure(server: Server, assistantId: string, clients: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const payload = body(assistantId);
  for (let index = 0; index < clients * 2; index += 1) await oneRun(agent, server.port, payload);
  const totals: number[] = [];
  const cpuBefore = treeCpuMs(server.pid);
  const started = performance.now();
  const deadline = started + SECONDS_PER_POINT * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) totals.push((await oneRun(agent, server.port, payload))[1]);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuPerRun = (treeCpuMs(server.pid) - cpuBefore) / totals.length;
  agent.destroy();
  return { runsPerSecond: totals.length / seconds, totalP50: median(totals), cpuPerRun };
}

/** `langgraph dev` (langgraph-cli[inmem]) serving the Python echo graph, or why it cannot run here. */
async function langgraphPythonDev(): Promise<Server | string> {
  const dir = path.join(ROOT, '.test-data', 'bench-langgraph-py');
  const venv = path.join(dir, 'venv');
  try {
    if (!fs.existsSync(path.join(venv, 'bin', 'langgraph'))) {
      fs.mkdirSync(dir, { recursive: true });
      await run('python3', ['-m', 'venv', venv]);
      await run(path.join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '-q', 'langgraph-cli[inmem]'], { timeout: 600_000 });
    }
  } catch (error) {
    return `could not install langgraph-cli[inmem]: ${(error as Error).message.split('\n')[0]}`;
  }
  const app = path.join(FIXTURES, 'runtime-echo-py');
  fs.writeFileSync(
    path.join(dir, 'langgraph.json'),
    JSON.stringify({ graphs: { agent: `${app}/echo_app/graph.py:graph` }, dependencies: [app], env: { ECHO_PREFIX: 'echo' } }),
  );
  const port = await findFreePort();
  try {
    return await startProcess(
      'langgraph dev (Python)',
      path.join(venv, 'bin', 'langgraph'),
      [
        'dev',
        '--config',
        path.join(dir, 'langgraph.json'),
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--no-browser',
        '--no-reload',
      ],
      { LANGGRAPH_CLI_NO_ANALYTICS: '1', LANGSMITH_TRACING: 'false', BROWSER: 'none' },
      port,
      dir,
    );
  } catch (error) {
    return `could not start: ${(error as Error).message.split('\n')[0]}`;
  }
}

function line(name: string, clients: number, result: Awaited<ReturnType<typeof measure>>): string {
  return `${name.padEnd(30)} ${String(clients).padStart(7)} ${result.runsPerSecond.toFixed(1).padStart(8)} ${result.totalP50.toFixed(2).padStart(18)} ${result.cpuPerRun.toFixed(2).padStart(19)}`;
}

/**
 * The database as a container instance reaches it: through PostgreSQL's unix socket (containerInstances.ts mounts
 * it), so libpq in the executor never sets up TLS. A server without a socket here is reached over TCP without TLS,
 * which is what the socket amounts to; the printed line says which.
 */
async function containerLikeDatabaseUri(admin: PgClient, databaseUri: string): Promise<{ uri: string; how: string }> {
  const url = new URL(databaseUri);
  const { rows } = await admin.query<{ unix_socket_directories: string }>('SHOW unix_socket_directories');
  for (const dir of rows[0]!.unix_socket_directories.split(',').map((entry) => entry.trim())) {
    if (!dir || !fs.existsSync(path.join(dir, `.s.PGSQL.${url.port || '5432'}`))) continue;
    const socketUrl = new URL(databaseUri);
    socketUrl.host = 'localhost';
    socketUrl.searchParams.set('host', dir);
    // The socket may take other authentication than TCP does (Debian: `peer` for postgres): used only if it admits us.
    const probe = new PgClient({ connectionString: socketUrl.toString() });
    const admitted = await probe.connect().then(
      () => true,
      () => false,
    );
    await probe.end().catch(() => undefined);
    if (admitted) return { uri: socketUrl.toString(), how: 'the database through its unix socket, as a container reaches it' };
  }
  url.searchParams.set('sslmode', 'disable');
  return { uri: url.toString(), how: 'the database over TCP without TLS (no usable unix socket here; a container uses one)' };
}

export async function benchRuntimePython(): Promise<void> {
  const adminUrl = process.env.GRAPHX_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const databaseName = `gx_bench_py_${Date.now().toString(36)}`;
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${databaseName}"`);
  const databaseUri = adminUrl.replace(/\/[^/]*$/, `/${databaseName}`);
  const servers: Server[] = [];
  // What `graphx runtime` is given as its control plane: a loopback server that accepts whatever it is sent (an idle
  // app sends nothing; traces of runs would go here).
  const controlPlane = http.createServer((request, response) => request.resume().on('end', () => response.writeHead(204).end()));
  await new Promise<void>((resolve) => controlPlane.listen(0, '127.0.0.1', resolve));
  const controlPlaneUrl = `http://127.0.0.1:${(controlPlane.address() as { port: number }).port}`;
  /**
   * Serves a fixture app: `graphx dev`, or (`command: 'runtime'`) `graphx runtime` with the instance environment a
   * runner gives it (PORT, HOST, DATABASE_URI, GRAPHX_CONFIG_PATH, the loopback control plane above), which is what a
   * container or a process instance runs.
   */
  const serve = async (
    app: string,
    node: { binary: string; options?: string; command?: 'dev' | 'runtime' } = { binary: process.execPath },
    appDatabaseUri = databaseUri,
  ) => {
    const port = await findFreePort();
    const configPath = path.join(FIXTURES, app, 'graphx.json');
    const runtime = node.command === 'runtime';
    const args = [
      path.join(ROOT, 'bin', 'graphx.js'),
      ...(runtime ? ['runtime'] : ['dev', '--config', configPath, '--port', String(port)]),
    ];
    const started = performance.now();
    const server = await startProcess(
      `graphx ${runtime ? 'runtime' : 'dev'} ${app}`,
      node.binary,
      args,
      {
        DATABASE_URI: appDatabaseUri,
        GRAPHX_LOG_LEVEL: 'warn',
        ...(runtime
          ? {
              // What both runners give an instance (the image's ENV, the process runner's environment).
              ...RUNTIME_PROCESS_ENV,
              PORT: String(port),
              HOST: '127.0.0.1',
              GRAPHX_CONFIG_PATH: configPath,
              GRAPHX_CONTROL_PLANE_URL: controlPlaneUrl,
              GRAPHX_SERVICE_TOKEN: 'bench-service-token',
              NODE_ENV: 'production',
            }
          : {}),
        ...(node.options ? { NODE_OPTIONS: node.options } : {}),
      },
      port,
    );
    servers.push(server);
    return { server, startMs: performance.now() - started };
  };
  const asRunnerStartsIt = { binary: process.execPath, command: 'runtime' } as const;
  try {
    // The environment is built (and cached) by the first start; the second start is the cold start a rollout sees.
    await (await serve('runtime-echo-py', asRunnerStartsIt)).server.stop();
    servers.length = 0;
    const { server: pythonOnly, startMs } = await serve('runtime-echo-py', asRunnerStartsIt);
    await settledIdle(pythonOnly);
    console.log(`Python app cold start (process start → /ok, environment cached): ${startMs.toFixed(0)} ms`);
    console.log(
      `Python app idle RSS (Node + executor), the host's Node ${process.version} as the process runner runs it (graphx runtime): ` +
        `${treeRssMb(pythonOnly.pid).toFixed(0)} MB; idle CPU ${(await idleCpuMsPerSecond(pythonOnly)).toFixed(1)} ms/s`,
    );
    await pythonOnly.stop();
    servers.length = 0;
    // A container runs the image's Node (DEFAULT_NODE_MAJOR unless graphx.json says otherwise) with the semi-space
    // size a 1 GB instance gets (src/pipeline/runtimeEnv.ts): the figure a deployed app's default shows. Not
    // runtimeNode(): this line is the image's figure whatever GRAPHX_BENCH_NODE says, and is skipped without it.
    const imageNode = await cachedNodeBinary(DEFAULT_NODE_MAJOR).catch((error: Error) => {
      console.log(`(no Node ${DEFAULT_NODE_MAJOR} binary for the image's figure: ${error.message})`);
      return null;
    });
    if (imageNode) {
      const containerDatabase = await containerLikeDatabaseUri(admin, databaseUri);
      const { server: inImageNode } = await serve(
        'runtime-echo-py',
        { binary: imageNode.binary, options: `--max-semi-space-size=${semiSpaceMb(1024)}`, command: 'runtime' },
        containerDatabase.uri,
      );
      await settledIdle(inImageNode);
      console.log(
        `Python app idle RSS (Node + executor), Node ${imageNode.version} as a 1 GB container of the default image ` +
          `runs it (graphx runtime), ${containerDatabase.how}: ${treeRssMb(inImageNode.pid).toFixed(0)} MB; ` +
          `idle CPU ${(await idleCpuMsPerSecond(inImageNode)).toFixed(1)} ms/s`,
      );
      await inImageNode.stop();
      servers.length = 0;
    }

    const { server: mixed } = await serve('runtime-mixed');
    console.log(`\nthreadless /runs/stream, updates mode, ${SECONDS_PER_POINT} s per point`);
    console.log('server / graph                 clients   runs/s   p50 whole run ms   server CPU ms/run');
    const hop: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    for (const graph of ['js_agent', 'py_agent']) {
      hop[graph] = await measure(mixed, graph, 1);
      console.log(line(`graphx ${graph}`, 1, hop[graph]!));
    }
    const ours: Record<number, number> = {};
    for (const clients of [8, 32]) {
      console.log(line('graphx js_agent', clients, await measure(mixed, 'js_agent', clients)));
      const python = await measure(mixed, 'py_agent', clients);
      ours[clients] = python.runsPerSecond;
      console.log(line('graphx py_agent', clients, python));
    }
    console.log(
      `\nexecutor hop per run (py_agent − js_agent, one client): ${(hop.py_agent!.totalP50 - hop.js_agent!.totalP50).toFixed(2)} ms wall, ` +
        `${(hop.py_agent!.cpuPerRun - hop.js_agent!.cpuPerRun).toFixed(2)} ms CPU`,
    );
    await mixed.stop();
    servers.length = 0;

    const peer = await langgraphPythonDev();
    if (typeof peer === 'string') {
      console.log(`peer (langgraph dev, Python): ${peer}`);
      return;
    }
    servers.push(peer);
    const ratios: string[] = [];
    for (const clients of [8, 32]) {
      const result = await measure(peer, 'agent', clients);
      console.log(line(peer.name, clients, result));
      ratios.push(`${clients} clients ${((ours[clients] ?? NaN) / result.runsPerSecond).toFixed(1)}x`);
    }
    console.log(`\nruns/s of graphx py_agent over langgraph dev (Python): ${ratios.join(', ')}`);
  } finally {
    for (const server of servers) await server.stop();
    controlPlane.close();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  }
}
