/**
 * Installed dependencies cached per lock file. A build whose install is the lock file's default (`npm ci`, …) and
 * whose lock file, package.json, tenant and Node version match an earlier successful install gets that
 * `node_modules` as hard links (the way pnpm's store works) instead of running the install again: the lock file pins
 * every package by integrity, so the result would be the same files. The tenant is part of the key, so packages one
 * tenant installed with its private registry token are never handed to another.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const LOCK_FILES = ['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml'];

/** The cache key of an app's dependencies, or null when they cannot be cached (no lock file). */
export function dependencyCacheKey(appDir: string, installCommand: string, tenantId: string): string | null {
  const lockFile = LOCK_FILES.map((name) => path.join(appDir, name)).find((file) => fs.existsSync(file));
  const manifest = path.join(appDir, 'package.json');
  if (!lockFile || !fs.existsSync(manifest)) return null;
  const hash = crypto.createHash('sha256');
  for (const part of [tenantId, installCommand, process.version, process.platform, process.arch, path.basename(lockFile)]) {
    hash.update(part).update('\0');
  }
  hash.update(fs.readFileSync(lockFile)).update('\0').update(fs.readFileSync(manifest));
  return hash.digest('hex');
}

/** Links the cached node_modules into `appDir`; false when there is none (or the app already has one). */
export async function restoreDependencies(cacheRoot: string, key: string, appDir: string): Promise<boolean> {
  const cached = path.join(cacheRoot, key, 'node_modules');
  const target = path.join(appDir, 'node_modules');
  if (!fs.existsSync(cached) || fs.existsSync(target)) return false;
  await run('cp', ['-al', cached, target]);
  return true;
}

/** Keeps `appDir/node_modules` for later builds; safe when two builds save the same key at once. */
export async function saveDependencies(cacheRoot: string, key: string, appDir: string): Promise<void> {
  const source = path.join(appDir, 'node_modules');
  const entry = path.join(cacheRoot, key);
  if (!fs.existsSync(source) || fs.existsSync(entry)) return;
  const staging = path.join(cacheRoot, `${key}.tmp-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(staging, { recursive: true });
  try {
    await run('cp', ['-al', source, path.join(staging, 'node_modules')]);
    fs.renameSync(staging, entry);
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    // Another build saved the same dependencies first: theirs is as good as ours.
    if (!fs.existsSync(entry)) throw error;
  }
}
