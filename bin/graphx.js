#!/usr/bin/env node
// The deployed application (`runtime`, `runtime-prepare`, `dev`) runs from a compiled bundle (bin/runtime-bundle.js).
// Everything else runs the TypeScript sources directly through tsx, for require() and import() alike, so
// `npm ci && npm start` needs no build step. Importing tsx's entry registers its hooks exactly as
// `node --import tsx` would.
const command = process.argv[2];
let bundle = null;
if (command === 'runtime' || command === 'runtime-prepare' || command === 'dev') {
  try {
    bundle = require('./runtime-bundle').runtimeBundle();
  } catch (error) {
    console.error(`graphx: running the runtime through tsx (could not bundle it: ${error.message})`);
  }
}
if (bundle) require(bundle);
else import('tsx').then(() => require('../src/cli/main.ts'));
