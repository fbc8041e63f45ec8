/** `npm run bench`: every benchmark in turn, printing figures (nothing is asserted). */
import { benchRuntime } from './runtime';

async function main(): Promise<void> {
  console.log('== bench/runtime: agent-server runs (graphx runtime vs LangGraph JS dev server vs bare HTTP)');
  await benchRuntime();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
