/**
 * Process groups this process started and has not seen end (builds, app instances). `graphx start` kills what is left
 * of them when its shutdown runs out of time or a second Ctrl-C asks to stop at once.
 */
const groups = new Set<number>();

/** Records a process group we lead (`detached: true` child). */
export function trackGroup(pgid: number | undefined): void {
  if (pgid) groups.add(pgid);
}

/** Forgets a group that has ended or was handed over. */
export function untrackGroup(pgid: number | null | undefined): void {
  if (pgid) groups.delete(pgid);
}

/** SIGKILL to every recorded group, synchronously (usable from a process 'exit' handler). */
export function killOwnedGroups(): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  groups.clear();
}
