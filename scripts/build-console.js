#!/usr/bin/env node
/*
 * Builds the web console (packages/console, React + Vite) into packages/console/dist when the build is missing or
 * older than its sources: run by `npm ci`/`npm install` (postinstall), by `graphx start` and by the tests' global
 * set-up, so the README's two commands stay two and an edited console is rebuilt on the next start. A digest of the
 * sources, the lock file and this script is kept in dist/.build-digest; a hit costs one hash of a few files.
 * Where the console's build tools are not installed (`npm ci --omit=dev`, as in the image's dependency stage) it
 * says so and does nothing: such an installation serves a console built elsewhere (the Dockerfile's console stage).
 */
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const CONSOLE_DIR = path.join(ROOT, 'packages', 'console');
const DIST_DIR = path.join(CONSOLE_DIR, 'dist');
const DIGEST_FILE = '.build-digest';
const INPUTS = ['package.json', 'index.html', 'vite.config.ts', 'tsconfig.json', 'src', 'public'];
/** Workspace packages the console imports (their sources go into the build too). */
const WORKSPACE_INPUTS = [path.join(ROOT, 'packages', 'contract', 'src')];

function listFiles(entry) {
  if (!fs.existsSync(entry)) return [];
  const stat = fs.statSync(entry);
  if (stat.isFile()) return [entry];
  return fs
    .readdirSync(entry)
    .sort()
    .flatMap((name) => listFiles(path.join(entry, name)));
}

/** sha256 over the console's sources and the workspace sources it imports (names and bytes), the lock file and this script. */
function sourceDigest() {
  const hash = crypto.createHash('sha256').update(fs.readFileSync(__filename));
  const lock = path.join(ROOT, 'package-lock.json');
  if (fs.existsSync(lock)) hash.update(fs.readFileSync(lock));
  const files = [...INPUTS.map((entry) => path.join(CONSOLE_DIR, entry)), ...WORKSPACE_INPUTS].flatMap(listFiles);
  for (const file of files) {
    hash.update(path.relative(CONSOLE_DIR, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 20);
}

function viteBin() {
  try {
    // The package's exports do not name its bin: found from its manifest.
    return path.join(path.dirname(require.resolve('vite/package.json', { paths: [CONSOLE_DIR] })), 'bin', 'vite.js');
  } catch {
    return null;
  }
}

/**
 * The directory of an up-to-date console build, building it first when needed.
 * @returns {{dir: string, built: boolean} | {dir: null, reason: string}}
 */
function ensureConsoleBuilt(options = {}) {
  if (!fs.existsSync(path.join(CONSOLE_DIR, 'src'))) {
    return fs.existsSync(path.join(DIST_DIR, 'index.html'))
      ? { dir: DIST_DIR, built: false }
      : { dir: null, reason: 'packages/console has no sources and no build' };
  }
  const digest = sourceDigest();
  const stamp = path.join(DIST_DIR, DIGEST_FILE);
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8').trim() === digest) return { dir: DIST_DIR, built: false };
  const vite = viteBin();
  if (!vite) {
    return fs.existsSync(path.join(DIST_DIR, 'index.html'))
      ? { dir: DIST_DIR, built: false }
      : { dir: null, reason: 'the console build tools are not installed (npm ci without --omit=dev installs them)' };
  }
  // Built beside the served copy and swapped in, so a running server never reads a half-written build.
  const temporary = path.join(CONSOLE_DIR, `dist.tmp-${process.pid}`);
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  log('graphx: building the web console (packages/console)');
  execFileSync(process.execPath, [vite, 'build', '--outDir', temporary, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: CONSOLE_DIR,
    // Vite keeps a NODE_ENV it finds (jest sets `test`), which would ship React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  fs.writeFileSync(path.join(temporary, DIGEST_FILE), `${digest}\n`);
  const previous = path.join(CONSOLE_DIR, `dist.old-${process.pid}`);
  if (fs.existsSync(DIST_DIR)) fs.renameSync(DIST_DIR, previous);
  fs.renameSync(temporary, DIST_DIR);
  fs.rmSync(previous, { recursive: true, force: true });
  return { dir: DIST_DIR, built: true };
}

module.exports = { ensureConsoleBuilt, CONSOLE_DIST_DIR: DIST_DIR };

if (require.main === module) {
  try {
    const result = ensureConsoleBuilt();
    if (!result.dir) console.warn(`graphx: web console not built: ${result.reason}`);
  } catch (error) {
    // Not fatal for npm: the control plane answers /console/ with what is missing, and `npm start` tries again.
    console.warn(`graphx: the web console could not be built: ${error.message}`);
    process.exitCode = process.env.CI ? 1 : 0;
  }
}
