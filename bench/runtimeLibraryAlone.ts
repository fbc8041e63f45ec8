/**
 * The graph library's own cost, for reading bench/runtime.ts's "server CPU per run": the echo graph's `graph.stream`
 * called in a process of its own, with no HTTP, no database and no server code, at the same concurrencies and with the
 * config a threadless run gets from graphx (runConfig.ts: thread, run, graph and assistant ids, and the same
 * metadata), each chunk serialised as the server does, and with a store attached as graphx attaches the deployment's
 * store to every graph (graphs.ts; an in-memory one here: what costs is the library's wrapping, not the backend).
 * Whatever graphx's CPU per run is above this figure is graphx's; the rest is LangGraph, LangChain core and langsmith,
 * which the app brings and graphx runs unchanged. The same graph without a store is measured beside it: LangGraph
 * wraps a run's store in an `AsyncBatchedStore` that polls its queue on a 0 ms timer for as long as the run lasts.
 *
 * Run as a child (`node bin/run-ts.js bench/runtimeLibraryAlone.ts <graph file> <seconds> <clients...>`) so that its
 * process is measured alone; it prints one JSON line per concurrency.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { ROOT } from './runtimeProcess';

export interface LibraryAlonePoint {
  clients: number;
  /** With a store attached, as graphx runs every graph. */
  runsPerSecond: number;
  cpuPerRun: number;
  /** The same graph without a store. */
  withoutStore: { runsPerSecond: number; cpuPerRun: number };
}

interface StreamingGraph {
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  withConfig(config: Record<string, unknown>): StreamingGraph;
  store?: unknown;
}

const INPUT = { messages: [{ role: 'user', content: 'hi' }] };
const ASSISTANT_ID = crypto.randomUUID();

async function oneRun(graph: StreamingGraph): Promise<void> {
  const threadId = crypto.randomUUID();
  const runId = crypto.randomUUID();
  const stream = await graph.stream(INPUT, {
    configurable: { thread_id: threadId, run_id: runId, graph_id: 'agent', assistant_id: ASSISTANT_ID },
    metadata: { graph_id: 'agent', assistant_id: ASSISTANT_ID, run_id: runId, thread_id: threadId, run_attempt: 1 },
    streamMode: ['updates'],
    subgraphs: false,
  });
  for await (const chunk of stream) JSON.stringify(chunk);
}

async function measure(
  graph: StreamingGraph,
  clients: number,
  seconds: number,
): Promise<Omit<LibraryAlonePoint, 'withoutStore'>> {
  for (let index = 0; index < clients * 2; index += 1) await oneRun(graph); // warm up, as the servers are
  let runs = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        await oneRun(graph);
        runs += 1;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return {
    clients,
    runsPerSecond: runs / ((performance.now() - started) / 1000),
    cpuPerRun: (cpu.user + cpu.system) / 1000 / runs,
  };
}

/** Runs the measurement in a child process and returns its points (or why it could not run). */
export function libraryAlone(
  graphFile: string,
  seconds: number,
  concurrency: number[],
  nodeBinary = process.execPath,
): Promise<LibraryAlonePoint[] | string> {
  return new Promise((resolve) => {
    const child = spawn(
      nodeBinary,
      [path.join(ROOT, 'bin', 'run-ts.js'), __filename, graphFile, String(seconds), ...concurrency.map(String)],
      { cwd: ROOT, env: { ...process.env, ECHO_PREFIX: 'echo', LANGSMITH_TRACING: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve(error.message));
    child.on('close', (code) => {
      const points = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LibraryAlonePoint);
      resolve(code === 0 && points.length === concurrency.length ? points : `exit ${code}: ${output.slice(-1000)}`);
    });
  });
}

async function main(graphFile: string, seconds: number, concurrency: number[]): Promise<void> {
  const graph = ((await import(graphFile)) as { graph: StreamingGraph }).graph;
  // Imported here, in the child: the bench process that spawns it does not load the graph library.
  const { InMemoryStore } = await import('@langchain/langgraph');
  const withStore = graph.withConfig({});
  withStore.store = new InMemoryStore();
  for (const clients of concurrency) {
    const point = await measure(withStore, clients, seconds);
    const { runsPerSecond, cpuPerRun } = await measure(graph, clients, seconds);
    console.log(JSON.stringify({ ...point, withoutStore: { runsPerSecond, cpuPerRun } }));
  }
}

// Started through bin/run-ts.js, which requires this file: `require.main` is run-ts.js itself.
if (path.resolve(process.argv[1] ?? '') === __filename) {
  const [graphFile, seconds, ...clients] = process.argv.slice(2);
  main(graphFile!, Number(seconds), clients.map(Number)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
