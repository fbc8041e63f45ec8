// graphx: the upstream suite's vitest settings (libs/langgraph-api/vitest.config.js), run by test/upstream/upstreamSuite.test.ts.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    fileParallelism: false,
    include: [process.env.UPSTREAM_FILE ?? "*.test.mts"],
  },
});
