/**
 * Process-group helpers shared by builds and app instances. Every child we start leads its own process group
 * (`detached: true`), so signalling `-pid` reaches everything it spawned (npm's scripts, sh's children), and the
 * group outlives a worker killed with SIGKILL, to be found again by its recorded pid.
 */
import fs from 'node:fs';
import path from 'node:path';

/** True when `pid` names a live process (a zombie counts as dead: it has exited, only its parent has not reaped it). */
export function isProcessAlive(pid: number | null | undefined): boolean {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: the pid was reused by another user's process, so it is not one of ours either.
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3, after the parenthesised command name (which may itself contain spaces or parentheses).
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No /proc (macOS): kill(0) succeeding is the best evidence available.
    return true;
  }
}

/** True when some process of the group led by `pgid` is still alive. */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // kill(0) on a group also succeeds while only zombies remain; on Linux, look for a live member.
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(path.join('/proc', entry, 'stat'), 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    } catch {
      // The process ended while we looked.
    }
  }
  return false;
}

/**
 * CPU time (clock ticks, user + system, with reaped children's) used so far by the live members of the group led by
 * `pgid`, or null without /proc. It only grows while they work: a build's watchdog reads a change as progress.
 */
export function groupCpuTicks(pgid: number): number | null {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[2]) === pgid) ticks += cpuOf(fields);
  }
  return ticks;
}

/** The fields of /proc/<pid>/stat after the command name (state first), or null when it is gone. */
export function statFields(pid: string): string[] | null {
  try {
    const stat = fs.readFileSync(path.join('/proc', pid, 'stat'), 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime + cutime + cstime of a process's stat fields (statFields). */
export function cpuOf(fields: string[]): number {
  return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index] ?? 0), 0);
}

/** Sends `signal` to the whole process group led by `pgid`; a group already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Stops a process group: SIGTERM, then SIGKILL once `graceMs` has passed. Resolves when no member is alive.
 * `onWait` runs about every second while waiting (activities heartbeat there).
 */
export async function stopGroup(pgid: number, graceMs: number, onWait: () => void = () => {}): Promise<void> {
  if (!isGroupAlive(pgid)) return;
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  let lastTick = Date.now();
  while (isGroupAlive(pgid)) {
    if (Date.now() >= deadline) {
      signalGroup(pgid, 'SIGKILL');
      // SIGKILL cannot be ignored; give the kernel a moment to reap, then stop waiting.
      const killDeadline = Date.now() + 5000;
      while (isGroupAlive(pgid) && Date.now() < killDeadline) await delay(50);
      return;
    }
    if (Date.now() - lastTick >= 1000) {
      lastTick = Date.now();
      onWait();
    }
    await delay(50);
  }
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A PATH with only the system directories and the directory of the node binary running us (where npm lives). */
export function minimalPath(): string {
  const dirs = [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'];
  return [...new Set(dirs)].join(':');
}
