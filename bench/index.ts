/**
 * `npm run bench`: every benchmark in turn, printing figures (nothing is asserted).
 * `BENCH_ONLY=runtime`, `BENCH_ONLY=pipeline`, `BENCH_ONLY=controlplane`,
 * `BENCH_ONLY=console` or `BENCH_ONLY=kubernetes` runs one;
 * `BENCH_ONLY=runtime-background` runs only the background-run and join-stream part of bench/runtime,
 * `BENCH_ONLY=runtime-protocol` the legacy vs protocol-v2 thread-run part, `BENCH_ONLY=runtime-python` Python graphs.
 */
import { benchConsole } from './console';
import { benchAdminUrl } from './support';
import { benchControlPlane } from './controlplane';
import { benchKubernetes } from './kubernetes';
import { benchPipeline } from './pipeline';
import { benchRuntime } from './runtime';
import { benchRuntimeBackground } from './runtimeBackground';
import { benchRuntimeProtocol } from './runtimeProtocol';
import { benchRuntimePython } from './runtimePython';

const benchmarks: Array<[string, string, () => Promise<void>]> = [
  ['runtime', 'agent-server runs (graphx runtime vs LangGraph JS dev server vs bare HTTP)', benchRuntime],
  ['runtime-protocol', 'thread runs, legacy stream vs protocol v2 (also part of bench/runtime)', () => benchRuntimeProtocol()],
  ['runtime-background', 'background runs and join streams only (also part of bench/runtime)', () => benchRuntimeBackground()],
  [
    'runtime-python',
    'Python graphs: the executor hop, graphx vs langgraph dev (Python), cold start, idle RSS',
    benchRuntimePython,
  ],
  ['controlplane', 'the reads CI polls (GET /ok, deployment, revision, revisions) vs a bare Koa + pg lookup', benchControlPlane],
  ['pipeline', 'create→DEPLOYED of a small LangGraph.js repository, and the orchestration overhead', benchPipeline],
  ['console', "the web console's first-load JavaScript (gzipped) and a 50-node graph picture's render time", benchConsole],
  ['kubernetes', 'apply + rollout detection on the test API server, and a 200-deployment reconcile', benchKubernetes],
];

async function main(): Promise<void> {
  // As `npm test`: the machine's PostgreSQL at 127.0.0.1:5432 when it answers, else an embedded one for this run.
  process.env.GRAPHX_BENCH_PG_ADMIN_URL = await benchAdminUrl();
  for (const [name, title, run] of benchmarks) {
    if (process.env.BENCH_ONLY && process.env.BENCH_ONLY !== name) continue;
    console.log(`\n== bench/${name}: ${title}`);
    await run();
  }
}

// Exit explicitly: an embedded PostgreSQL child keeps the event loop alive, and benchAdminUrl stops it on exit.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
