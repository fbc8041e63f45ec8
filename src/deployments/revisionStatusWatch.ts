/**
 * Long-poll support for `GET …/revisions/{id}?wait_for_change_from=<status>`: every waiting request of this process
 * shares one timer that reads the statuses of all watched revisions in a single primary-key query. A thousand CI jobs
 * waiting on one API cost four small queries a second, and never a Temporal call: the revision workflow writes each
 * status change to the row (a local activity it awaits before going on), so the row is where the change appears.
 */
import type { Db } from '../db/knex';
import { RevisionRepository } from '../db/repositories/revisions';

/** How often the shared timer reads the watched rows: well inside the "status change within a second" promise. */
const POLL_INTERVAL_MS = 250;

interface Waiter {
  revisionId: string;
  fromStatus: string;
  resolve: () => void;
  timer: NodeJS.Timeout;
}

export class RevisionStatusWatch {
  private readonly waiters = new Set<Waiter>();
  private poller: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(private readonly db: Db) {}

  /**
   * Resolves once the revision's row has a status other than `fromStatus`, or after `timeoutMs` (whichever comes
   * first), or when `abort` fires (the client went away). The caller reads the row afterwards.
   */
  waitForChange(revisionId: string, fromStatus: string, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        revisionId,
        fromStatus,
        resolve: () => {
          clearTimeout(waiter.timer);
          this.waiters.delete(waiter);
          abort?.removeEventListener('abort', waiter.resolve);
          if (this.waiters.size === 0) this.stopPolling();
          resolve();
        },
        timer: setTimeout(() => waiter.resolve(), timeoutMs),
      };
      abort?.addEventListener('abort', waiter.resolve, { once: true });
      this.waiters.add(waiter);
      this.poller ??= setInterval(() => void this.poll(), POLL_INTERVAL_MS);
    });
  }

  /** Releases every waiter at once (the API is shutting down). */
  close(): void {
    for (const waiter of [...this.waiters]) waiter.resolve();
  }

  private stopPolling(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  private async poll(): Promise<void> {
    // A slow database must not stack up overlapping reads.
    if (this.polling || this.waiters.size === 0) return;
    this.polling = true;
    try {
      const ids = [...new Set([...this.waiters].map((waiter) => waiter.revisionId))];
      const statusOf: Map<string, string> = await new RevisionRepository(this.db).statusesOf(ids);
      for (const waiter of [...this.waiters]) {
        const status = statusOf.get(waiter.revisionId);
        if (status !== undefined && status !== waiter.fromStatus) waiter.resolve();
      }
    } catch {
      // The next tick tries again; a waiter's own timeout bounds how long a broken database can hold it.
    } finally {
      this.polling = false;
    }
  }
}
