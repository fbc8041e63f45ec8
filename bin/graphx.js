#!/usr/bin/env node
// The `graphx` command. The deployed application's commands (`runtime`, `runtime-prepare`, `dev`) belong to the runtime
// package, which runs them from its compiled bundle (packages/runtime/bin/graphx-runtime.js). Everything else runs the
// control plane's TypeScript sources directly through tsx, for require() and import() alike, so
// `npm ci && npm start` needs no build step. Importing tsx's entry registers its hooks exactly as
// `node --import tsx` would.
const fs = require('node:fs');
const path = require('node:path');

const command = process.argv[2];
// The runtime image holds the runtime package alone: there every command is the runtime's.
const controlPlane = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
if (command === 'runtime' || command === 'runtime-prepare' || command === 'dev' || !fs.existsSync(controlPlane)) {
  require('../packages/runtime/bin/graphx-runtime.js');
} else {
  import('tsx').then(() => require(controlPlane));
}
