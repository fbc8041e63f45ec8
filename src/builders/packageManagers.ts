/**
 * yarn (classic and berry) and pnpm for builds, without the user installing anything: the platform ships them as npm
 * packages (corepack cannot be relied on: it refuses this registry's package signatures), and every build finds them
 * through small shims at the front of its PATH. The `yarn` shim picks berry when the repository asks for yarn 2+
 * (`packageManager: "yarn@4…"`, a `.yarnrc.yml`, or a berry lock file), else yarn 1.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Directory of an installed package of the platform (its own node_modules, wherever npm hoisted it). */
function packageDir(name: string): string {
  for (const dir of module.paths) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  throw new Error(`The platform's ${name} package is missing: run npm ci.`);
}

/**
 * True when the app in `dir` asks for yarn 2+ (berry). Plain JavaScript kept as source text: the yarn shim runs this
 * very function, so the shim and the choice of install command cannot disagree.
 */
const WANTS_BERRY_SOURCE = `function wantsYarnBerry(dir) {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const match = /^yarn@(\\d+)/.exec(String(manifest.packageManager || ''));
    if (match) return Number(match[1]) >= 2;
  } catch (error) {
    // No or broken package.json: the other files decide.
  }
  if (fs.existsSync(path.join(dir, '.yarnrc.yml'))) return true;
  const lock = path.join(dir, 'yarn.lock');
  return fs.existsSync(lock) && fs.readFileSync(lock, 'utf8').slice(0, 4096).includes('__metadata:');
}`;

// Our own constant source, shared with the shim.
export const wantsYarnBerry = new Function('fs', 'path', `return ${WANTS_BERRY_SOURCE}`)(fs, path) as (dir: string) => boolean;

function shimSource(cli: string | { classic: string; berry: string }): string {
  const pick =
    typeof cli === 'string'
      ? `const cli = ${JSON.stringify(cli)};`
      : `const fs = require('fs');\nconst path = require('path');\n${WANTS_BERRY_SOURCE}\n` +
        `const cli = wantsYarnBerry(process.cwd()) ? ${JSON.stringify(cli.berry)} : ${JSON.stringify(cli.classic)};`;
  return `#!${process.execPath}\n// Shipped with graphx platform (see src/builders/packageManagers.ts).\n${pick}\nprocess.argv[1] = cli;\nrequire(cli);\n`;
}

/**
 * Writes (or refreshes) the shims under `<dataDir>/build-tools/bin` and returns that directory, to put first on a
 * build's PATH.
 */
export function ensurePackageManagerShims(dataDir: string): string {
  const bin = path.join(dataDir, 'build-tools', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const shims: Record<string, string> = {
    yarn: shimSource({
      classic: path.join(packageDir('yarn'), 'bin', 'yarn.js'),
      berry: path.join(packageDir('@yarnpkg/cli-dist'), 'bin', 'yarn.js'),
    }),
    pnpm: shimSource(path.join(packageDir('pnpm'), 'bin', 'pnpm.cjs')),
  };
  shims.yarnpkg = shims.yarn as string;
  for (const [name, source] of Object.entries(shims)) {
    const file = path.join(bin, name);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === source) continue;
    // Written aside and renamed: a build running now never sees half a shim.
    const partial = `${file}.${process.pid}`;
    fs.writeFileSync(partial, source, { mode: 0o755 });
    fs.renameSync(partial, file);
  }
  return bin;
}

/** The install command a lock file implies, or null when the app has none. */
export function defaultInstallCommand(appDir: string): string | null {
  const has = (file: string) => fs.existsSync(path.join(appDir, file));
  if (has('package-lock.json') || has('npm-shrinkwrap.json')) return 'npm ci';
  if (has('yarn.lock')) return wantsYarnBerry(appDir) ? 'yarn install --immutable' : 'yarn install --frozen-lockfile';
  if (has('pnpm-lock.yaml')) return 'pnpm install --frozen-lockfile';
  return null;
}
