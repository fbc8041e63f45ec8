#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npm ci && npm start` needs no build step.
require('tsx/cjs/api').register();
require('../src/cli/main.ts');
