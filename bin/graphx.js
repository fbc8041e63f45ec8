#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, for require() and import() alike, so `npm ci && npm start` needs
// no build step. Importing tsx's entry registers its hooks exactly as `node --import tsx` would.
import('tsx').then(() => require('../src/cli/main.ts'));
