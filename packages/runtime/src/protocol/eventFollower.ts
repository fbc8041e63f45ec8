/**
 * Follows a thread's protocol-v2 events from the database (rows any instance wrote), as they come, until the signal
 * aborts. A stream may be opened on a thread that does not exist yet (a client names its new thread and its first
 * `run.start` creates it): nothing is sent until the thread exists, and then only if the caller may read it (its
 * `threads:read` filter); a thread another user created ends the stream with nothing sent.
 */
import type { RunEvents } from '../execution/runEvents';
import type { RunEventStore } from '../storage/runEventStore';
import type { ContainmentFilter, ThreadStore } from '../storage/threadStore';
import { wireEventOf, type WireEvent } from './wireEvents';

const POLL_MS = 1_000;
// Rows read at once; a full page means more may be waiting, read at once.
const PAGE = 500;

export interface FollowerDeps {
  runEvents: RunEvents;
  eventStore: RunEventStore;
  threads: ThreadStore;
}

/**
 * Where a follower starts: after `since` when given, else at the start of the thread's latest run (the start of its
 * events when the caller just found the thread missing: it has no run yet, and no query is needed to say so).
 */
export async function followStart(
  deps: FollowerDeps,
  threadId: string,
  since: number | undefined,
  threadMissing = false,
): Promise<string> {
  if (since !== undefined) return String(since);
  return threadMissing ? '0' : deps.eventStore.beforeLatestRun(threadId);
}

export async function* followProtocolEvents(
  deps: FollowerDeps,
  threadId: string,
  filter: ContainmentFilter,
  afterId: string,
  signal: AbortSignal,
): AsyncGenerator<{ event: WireEvent; runId: string | null }> {
  let cursor = afterId;
  let checked = false;
  while (!signal.aborted) {
    // Listening before the read: a write that lands while the read is in flight (or while the events are being sent)
    // wakes the next read at once, and a read that found everything does not need a second, empty one to be sure.
    const news = deps.runEvents.waitForNews(`thread:${threadId}`, POLL_MS, signal);
    const rows = await deps.eventStore.forThread(threadId, cursor, PAGE);
    if (rows.length > 0 && !checked) {
      if (!(await deps.threads.visibility(threadId, filter))?.visible) return;
      checked = true;
    }
    for (const row of rows) {
      cursor = row.id;
      const event = wireEventOf(row);
      if (event) yield { event, runId: row.runId };
    }
    if (rows.length < PAGE) await news;
  }
}
