/**
 * `npm run bench`: every benchmark in turn, printing figures (nothing is asserted).
 * `BENCH_ONLY=runtime`, `BENCH_ONLY=pipeline`, `BENCH_ONLY=controlplane` or `BENCH_ONLY=kubernetes` runs one; `BENCH_ONLY=runtime-background`
 * runs only the background-run and join-stream part of bench/runtime.
 */
import { benchControlPlane } from './controlplane';
import { benchKubernetes } from './kubernetes';
import { benchPipeline } from './pipeline';
import { benchRuntime } from './runtime';
import { benchRuntimeBackground } from './runtimeBackground';

const benchmarks: Array<[string, string, () => Promise<void>]> = [
  ['runtime', 'agent-server runs (graphx runtime vs LangGraph JS dev server vs bare HTTP)', benchRuntime],
  ['runtime-background', 'background runs and join streams only (also part of bench/runtime)', () => benchRuntimeBackground()],
  ['controlplane', 'the reads CI polls (GET /ok, deployment, revision, revisions) vs a bare Koa + pg lookup', benchControlPlane],
  ['pipeline', 'create→DEPLOYED of a small LangGraph.js repository, and the orchestration overhead', benchPipeline],
  ['kubernetes', 'apply + rollout detection on the test API server, and a 200-deployment reconcile', benchKubernetes],
];

async function main(): Promise<void> {
  for (const [name, title, run] of benchmarks) {
    if (process.env.BENCH_ONLY && process.env.BENCH_ONLY !== name) continue;
    console.log(`\n== bench/${name}: ${title}`);
    await run();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
