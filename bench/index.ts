/**
 * `npm run bench`: every benchmark in turn, printing figures (nothing is asserted).
 * `BENCH_ONLY=runtime`, `BENCH_ONLY=pipeline`, `BENCH_ONLY=controlplane` or `BENCH_ONLY=console` runs one; `BENCH_ONLY=runtime-background`
 * runs only the background-run and join-stream part of bench/runtime.
 */
import { benchConsole } from './console';
import { benchControlPlane } from './controlplane';
import { benchPipeline } from './pipeline';
import { benchRuntime } from './runtime';
import { benchRuntimeBackground } from './runtimeBackground';

const benchmarks: Array<[string, string, () => Promise<void>]> = [
  ['runtime', 'agent-server runs (graphx runtime vs LangGraph JS dev server vs bare HTTP)', benchRuntime],
  ['runtime-background', 'background runs and join streams only (also part of bench/runtime)', () => benchRuntimeBackground()],
  ['controlplane', 'the reads CI polls (GET /ok, deployment, revision, revisions) vs a bare Koa + pg lookup', benchControlPlane],
  ['pipeline', 'create→DEPLOYED of a small LangGraph.js repository, and the orchestration overhead', benchPipeline],
  ['console', "the web console's first-load JavaScript (gzipped) and a 50-node graph picture's render time", benchConsole],
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
