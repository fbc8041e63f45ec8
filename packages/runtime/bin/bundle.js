#!/usr/bin/env node
// The deployed application (`graphx runtime`, `graphx dev`) runs from one esbuild bundle of its sources instead of
// through tsx: no TypeScript transpiler (tsx's loader thread, esbuild service, source maps) in a process that serves
// for days. The bundle holds the workspace's own code the runtime uses (this package, @graphx/kit, @graphx/contract;
// npm packages stay in node_modules) and is cached under dist/ by a digest of exactly those sources, so an edited
// runtime source rebuilds on the next start while a control-plane edit changes nothing here. `node bin/bundle.js`
// builds it ahead (the Dockerfile does); bin/graphx-runtime.js falls back to tsx when it cannot be built (read-only
// tree, no esbuild).
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const PACKAGE_DIR = path.resolve(__dirname, '..');
const PACKAGES_DIR = path.dirname(PACKAGE_DIR);
/** What the bundle is made of: the runtime and the two packages it depends on, their sources and manifests. */
const INPUT_PACKAGES = ['runtime', 'kit', 'contract'];
const ENTRY = path.join(PACKAGE_DIR, 'src', 'cli', 'main.ts');
// Beside src/: modules that find files relative to their own directory (`__dirname/..`) work bundled and unbundled.
const OUT_DIR = path.join(PACKAGE_DIR, 'dist');

function sourceFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return /\.(ts|mts|mjs|js|json)$/.test(entry.name) ? [full] : [];
    })
    .sort();
}

/** The files the bundle is built from (paths relative to packages/), in a stable order. */
function bundleInputs(packagesDir = PACKAGES_DIR) {
  return INPUT_PACKAGES.flatMap((name) => [
    path.join(packagesDir, name, 'package.json'),
    ...sourceFiles(path.join(packagesDir, name, 'src')),
  ]).filter((file) => fs.existsSync(file));
}

/**
 * sha256 of every input file (path below packages/ and content), this script and the esbuild version: the cache key.
 * `packagesDir` lets a test compute it over a copy of the tree.
 */
function sourceDigest(esbuildVersion, packagesDir = PACKAGES_DIR) {
  const hash = crypto.createHash('sha256').update(esbuildVersion).update(fs.readFileSync(__filename));
  for (const file of bundleInputs(packagesDir)) {
    hash.update(path.relative(packagesDir, file)).update('\0').update(fs.readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/** Path of an up-to-date bundle, building it if needed. Throws when it cannot be built. */
function runtimeBundle() {
  // The compiler itself is loaded only to build: a cache hit costs reading the sources and one hash.
  const outfile = path.join(OUT_DIR, `runtime-${sourceDigest(require('esbuild/package.json').version)}.js`);
  if (fs.existsSync(outfile)) return outfile;
  fs.mkdirSync(OUT_DIR, { recursive: true });
  // Several instances may start at once: each writes its own file and renames it into place (same content). esbuild
  // runs in a child process: its service would otherwise stay in this one, which goes on to serve.
  const temporary = `${outfile}.${process.pid}.tmp`;
  execFileSync(process.execPath, [__filename, '--build', temporary], { stdio: ['ignore', 'ignore', 'inherit'] });
  fs.renameSync(temporary, outfile);
  for (const stale of fs.readdirSync(OUT_DIR)) {
    if (stale !== path.basename(outfile) && /^runtime-[0-9a-f]+\.js$/.test(stale))
      fs.rmSync(path.join(OUT_DIR, stale), { force: true });
  }
  return outfile;
}

/** npm packages stay in node_modules; the workspace's own packages (@graphx/*, TypeScript sources) are bundled. */
const ownPackagesBundled = {
  name: 'graphx-externals',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@graphx/') ? undefined : { external: true }));
  },
};

async function build(outfile) {
  await require('esbuild').build({
    entryPoints: [ENTRY],
    outfile,
    bundle: true,
    plugins: [ownPackagesBundled],
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // ASCII output: one non-Latin-1 character makes V8 hold the whole source as a two-byte string, ~0.5 MB more of
    // every instance's heap. esbuild escapes strings, identifiers and regular expressions; the comments it keeps are
    // escaped here.
    charset: 'ascii',
    logLevel: 'error',
  });
  const source = fs.readFileSync(outfile, 'utf8');
  fs.writeFileSync(
    outfile,
    source.replace(/[^\x00-\x7f]/gu, (char) => `\\u{${char.codePointAt(0).toString(16)}}`),
  );
}

module.exports = { runtimeBundle, sourceDigest, bundleInputs, INPUT_PACKAGES };

if (require.main === module) {
  if (process.argv[2] === '--build') {
    build(process.argv[3]).catch((error) => {
      console.error(error);
      process.exit(1);
    });
  } else console.log(runtimeBundle());
}
