#!/usr/bin/env node
// The runtime's own entry point: `graphx-runtime runtime | runtime-prepare | dev` (the root `graphx` command hands
// those three to it). It runs the compiled bundle (bin/bundle.js) and falls back to the TypeScript sources through
// tsx when the bundle cannot be built.
let bundle = null;
try {
  bundle = require('./bundle').runtimeBundle();
} catch (error) {
  console.error(`graphx: running the runtime through tsx (could not bundle it: ${error.message})`);
}
if (bundle) require(bundle);
else import('tsx').then(() => require('../src/cli/main.ts'));
