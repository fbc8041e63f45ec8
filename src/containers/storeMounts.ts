/**
 * The mounts an engine leaves in its store. podman's overlay driver bind-mounts `<graphroot>/overlay` onto itself
 * (private) the first time it opens the store and never unmounts it when its API service ends, so after every stop the
 * data dir held a mount and `rm -rf data` failed with "Device or resource busy". Stopping graphx's own engine
 * therefore unmounts what is left under its store, deepest first, once nothing else uses that store.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Mount points at or under `dir`, deepest first (from /proc/self/mountinfo). */
export function mountsUnder(dir: string): string[] {
  let mountinfo: string;
  try {
    mountinfo = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const root = path.resolve(dir);
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => Boolean(point))
    .map((point) => point.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === root || point.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
}

/**
 * True while a live process has `storageConf` as its CONTAINERS_STORAGE_CONF: another engine service on the same
 * store, or a running container's conmon (started by the service, with its environment).
 */
export function storeInUse(storageConf: string): boolean {
  const wanted = `CONTAINERS_STORAGE_CONF=${storageConf}`;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return false;
  }
  return pids.some((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(wanted);
    } catch {
      return false;
    }
  });
}

/**
 * Unmounts every mount under `storeDir` unless the store is still in use (storeInUse); returns the mount points left
 * (busy, or not ours to unmount). Needs the right to unmount (root, as graphx's own rootful podman runs).
 */
export function unmountStore(storeDir: string, storageConf: string): string[] {
  const mounts = mountsUnder(storeDir);
  if (mounts.length === 0 || storeInUse(storageConf)) return mounts;
  for (const point of mounts) {
    try {
      execFileSync('umount', [point], { stdio: 'ignore' });
    } catch {
      // Busy (a container still running on it) or not permitted: reported below.
    }
  }
  return mountsUnder(storeDir);
}
