/**
 * The process runner's Python environments (`<dataDir>/python-envs/<digest>`) are shared by every revision built with
 * the same dependencies, so no single revision's teardown may delete one. After a deployment's teardown, this removes
 * the environments no remaining build names (`builds/<rev>/python-env.json`) that were not used lately either: an
 * environment's marker is touched at each reuse, and a build records its interpreter only when it ends, so anything
 * used within `graceMs` (more than a build may take) is kept for the build that may be using it right now. Half-made
 * environments (`<digest>.tmp-*`) older than the grace are a build that died and go too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { COMPLETE_MARKER } from '@graphx/runtime/python/pythonRequirements';
import { logger } from '@graphx/kit/logger';

/** The environment directories the builds under `buildsDir` run with (other than `exceptRevisions`'). */
function environmentsInUse(buildsDir: string, envsDir: string, exceptRevisions: Set<string>): Set<string> {
  const inUse = new Set<string>();
  let revisions: string[] = [];
  try {
    revisions = fs.readdirSync(buildsDir);
  } catch {
    return inUse;
  }
  for (const revision of revisions) {
    if (exceptRevisions.has(revision)) continue;
    try {
      const { python } = JSON.parse(fs.readFileSync(path.join(buildsDir, revision, 'python-env.json'), 'utf8')) as {
        python?: unknown;
      };
      if (typeof python !== 'string') continue;
      const relative = path.relative(envsDir, python);
      if (!relative.startsWith('..') && !path.isAbsolute(relative)) inUse.add(relative.split(path.sep)[0]!);
    } catch {
      // No Python environment for this build.
    }
  }
  return inUse;
}

/** Last use of an environment directory: its marker's time, or the directory's own for one never completed. */
function lastUsedMs(directory: string): number {
  for (const file of [path.join(directory, COMPLETE_MARKER), directory]) {
    try {
      return fs.statSync(file).mtimeMs;
    } catch {
      // Try the next.
    }
  }
  return 0;
}

/**
 * Removes the unused environments (see the file's comment). `exceptRevisions`: builds being deleted, whose records do
 * not count. @returns the names removed.
 */
export function prunePythonEnvironments(
  dataDir: string,
  options: { graceMs: number; exceptRevisions?: string[]; now?: number },
): string[] {
  const envsDir = path.join(dataDir, 'python-envs');
  let entries: string[];
  try {
    entries = fs.readdirSync(envsDir);
  } catch {
    return [];
  }
  const inUse = environmentsInUse(path.join(dataDir, 'builds'), envsDir, new Set(options.exceptRevisions ?? []));
  const cutoff = (options.now ?? Date.now()) - options.graceMs;
  const removed: string[] = [];
  for (const entry of entries) {
    if (inUse.has(entry)) continue;
    const directory = path.join(envsDir, entry);
    if (lastUsedMs(directory) > cutoff) continue;
    fs.rmSync(directory, { recursive: true, force: true });
    removed.push(entry);
  }
  if (removed.length > 0) logger.info({ removed }, 'removed Python environments no build uses');
  return removed;
}
