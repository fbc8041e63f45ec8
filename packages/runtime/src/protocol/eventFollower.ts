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

export interface FollowerDeps {
  runEvents: RunEvents;
  eventStore: RunEventStore;
  threads: ThreadStore;
}

/** Where a follower starts: after `since` when given, else at the start of the thread's latest run. */
export async function followStart(deps: FollowerDeps, threadId: string, since: number | undefined): Promise<string> {
  return since !== undefined ? String(since) : deps.eventStore.beforeLatestRun(threadId);
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
    const rows = await deps.eventStore.forThread(threadId, cursor);
    if (rows.length > 0 && !checked) {
      if (!(await deps.threads.get(threadId, filter))) return;
      checked = true;
    }
    for (const row of rows) {
      cursor = row.id;
      const event = wireEventOf(row);
      if (event) yield { event, runId: row.runId };
    }
    if (rows.length === 0) await deps.runEvents.waitForNews(`thread:${threadId}`, POLL_MS, signal);
  }
}
