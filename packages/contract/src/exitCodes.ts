import type { RevisionStatus } from './statuses';

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

/** The exit code a revision's final status stands for; null while it is still in progress. */
export function exitCodeOfStatus(status: RevisionStatus | string): number | null {
  if (status === 'DEPLOYED') return EXIT.deployed;
  if (status === 'SKIPPED') return EXIT.skipped;
  if (status.endsWith('_FAILED') || status === 'INTERRUPTED' || status === 'UNKNOWN') return EXIT.failed;
  return null;
}
