#!/usr/bin/env node
// Runs one TypeScript entry point (benchmarks, scripts) through tsx (see bin/graphx.js).
const path = require('node:path');
const entry = process.argv[2];
if (!entry) {
  console.error('usage: run-ts.js <file.ts> [args...]');
  process.exit(2);
}
process.argv.splice(1, 1);
import('tsx').then(() => require(path.resolve(entry)));
