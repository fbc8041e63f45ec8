import { FAILED_REVISION_STATUSES, REVISION_STATUSES, SETTLED_REVISION_STATUSES, type RevisionStatus } from './statuses';

/**
 * Exit codes of the `graphx` commands (documented in README "From CI"); a CI job branches on them, the runtime's own
 * commands use `usage` too.
 */
export const EXIT = {
  deployed: 0,
  failed: 1,
  usage: 2,
  timedOut: 3,
  unreachable: 4,
  skipped: 5,
  /** Ctrl-C: the wait stopped; the revision goes on. */
  interrupted: 130,
} as const;

/** The exit code a revision's final status stands for; null while it is still in progress (or for an unknown word). */
export function exitCodeOfStatus(status: string): number | null {
  if (!(REVISION_STATUSES as readonly string[]).includes(status)) return null;
  const revisionStatus = status as RevisionStatus;
  if (revisionStatus === 'DEPLOYED') return EXIT.deployed;
  if (revisionStatus === 'SKIPPED') return EXIT.skipped;
  if (SETTLED_REVISION_STATUSES.includes(revisionStatus) || FAILED_REVISION_STATUSES.includes(revisionStatus)) return EXIT.failed;
  return null;
}
