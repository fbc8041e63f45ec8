/**
 * Follows a thread's protocol-v2 events (rows any instance wrote: read from the database, or handed over as this
 * instance writes them, execution/threadFollower.ts), as they come, until the signal aborts. A stream may be opened on a thread that does not exist yet (a client names its new thread and its first
 * `run.start` creates it): nothing is sent until the thread exists, and then only if the caller may read it (its
 * `threads:read` filter); a thread another user created ends the stream with nothing sent.
 */
import type { RunEvents } from '../execution/runEvents';
import { followThreadRows } from '../execution/threadFollower';
import type { ThreadWatch } from '../execution/threadWatch';
import type { RunEventStore } from '../storage/runEventStore';
import type { ContainmentFilter, ThreadStore } from '../storage/threadStore';
import { methodOf, wireEventOf, wireFrameOf, type WireEvent } from './wireEvents';

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

/**
 * The thread's protocol events after row id `afterId` (`watch`: RunEvents.watchThread, closed when this ends). The
 * caller's `threads:read` filter is checked once, when the first rows come; rows handed over by a run writing here
 * need no check under an empty filter (the run holds the thread, and such a caller sees every thread). `wants`:
 * whether events of a method may be used at all (the others are skipped before their data is read). `json`: the
 * event's wire text when the row was handed over (sent as it is, without reading the row).
 */
export async function* followProtocolEvents(
  deps: FollowerDeps,
  watch: ThreadWatch,
  filter: ContainmentFilter,
  afterId: string,
  signal: AbortSignal,
  wants: (method: string) => boolean = () => true,
): AsyncGenerator<{ event: WireEvent; runId: string | null; json: string | undefined }> {
  let checked = false;
  const unfiltered = Object.keys(filter).length === 0;
  for await (const { rows, pushed } of followThreadRows(deps.eventStore, watch, afterId, signal)) {
    if (!checked) {
      if (!(pushed && unfiltered) && !(await deps.threads.visibility(watch.threadId, filter))?.visible) return;
      checked = true;
    }
    for (const row of rows) {
      const method = methodOf(row);
      if (method === null || !wants(method)) continue;
      yield { event: wireEventOf(row)!, runId: row.runId, json: wireFrameOf(row, method) };
    }
  }
}
