/**
 * The thread stream (`GET /threads/{id}/stream`, the Python server's "join thread stream"): the events of every run
 * on the thread, one after another, and the thread's state updates, from the database (RunEventStore) so that runs
 * executed by any instance appear; it stays open until the client leaves. Ids are the rows' ids, ordered within the
 * thread. `Last-Event-ID`: `-` (or `-1`) replays every event still kept, an id replays what came after it, none
 * starts with what comes next. `stream_mode` as the Python server reads it: `run_modes` (the default) every run
 * event and the end of each run (`metadata` `{status: "run_done", run_id}`), `lifecycle` only a run's start
 * (its `metadata`) and end, `state_update` only the `state_update` events of `POST /threads/{id}/state`.
 */
import { InputError } from '@graphx/kit/errors';
import { compareRowIds, END_EVENT, type RunEventStore, type StoredRunEvent } from '../storage/runEventStore';
import type { StreamEvent } from './graphStream';
import type { RunEvents } from './runEvents';
import type { ThreadWatch } from './threadWatch';

export const THREAD_STREAM_MODES = ['run_modes', 'lifecycle', 'state_update'] as const;
export type ThreadStreamMode = (typeof THREAD_STREAM_MODES)[number];
export const STATE_UPDATE_EVENT = 'state_update';

const POLL_MS = 1_000;
// Rows read at once; a full page means more may be waiting.
const PAGE = 500;

/** Where a thread stream starts: the row id after which events are sent. */
export async function threadStreamStart(store: RunEventStore, threadId: string, lastEventId: string | null): Promise<string> {
  if (lastEventId === null) return store.lastThreadEventId(threadId);
  if (lastEventId === '-' || lastEventId === '-1') return '0';
  if (!/^\d{1,18}$/.test(lastEventId))
    throw new InputError(`Last-Event-ID ${JSON.stringify(lastEventId)} is not an event id of this stream.`);
  return lastEventId;
}

function asThreadEvent(row: StoredRunEvent, modes: readonly ThreadStreamMode[]): StreamEvent | null {
  const event = row.event === END_EVENT ? 'metadata' : row.event;
  const data = row.event === END_EVENT ? { status: 'run_done', run_id: row.runId } : row.data;
  if (modes.includes('run_modes') && event !== STATE_UPDATE_EVENT) return { event, data };
  if (modes.includes('state_update') && event === STATE_UPDATE_EVENT) return { event, data };
  if (modes.includes('lifecycle') && event === 'metadata') {
    const meta = data as Record<string, unknown> | null;
    if (meta && (meta.status === 'run_done' || ('run_id' in meta && 'attempt' in meta))) return { event, data };
  }
  return null;
}

/**
 * The thread's rows after row id `afterId`, batch by batch as they come, until `signal` aborts; closes `watch` when
 * done. Rows this instance writes are handed over by the watch (`pushed`), not read back; the database is read first
 * when the watch says so, when another instance wrote, and after a second without news.
 */
export async function* followThreadRows(
  eventStore: RunEventStore,
  watch: ThreadWatch,
  afterId: string,
  signal: AbortSignal,
): AsyncGenerator<{ rows: StoredRunEvent[]; pushed: boolean }> {
  let cursor = BigInt(afterId).toString();
  try {
    while (!signal.aborted) {
      const news = watch.take();
      const rows = news.stale
        ? await eventStore.forThread(watch.threadId, cursor, PAGE)
        : news.rows.filter((row) => compareRowIds(row.id, cursor) > 0);
      // A full page: more may be waiting, read at once.
      if (news.stale && rows.length === PAGE) watch.markStale();
      if (rows.length === 0) {
        await watch.next(POLL_MS, signal);
        continue;
      }
      cursor = rows[rows.length - 1]!.id;
      yield { rows, pushed: !news.stale };
    }
  } finally {
    watch.close();
  }
}

/** Yields the thread's events after row id `afterId` as they come, until `signal` aborts. */
export async function* followThread(
  deps: { runEvents: RunEvents; eventStore: RunEventStore },
  threadId: string,
  afterId: string,
  modes: readonly ThreadStreamMode[],
  signal: AbortSignal,
): AsyncGenerator<StreamEvent & { id: string }> {
  const watch = deps.runEvents.watchThread(threadId);
  for await (const { rows } of followThreadRows(deps.eventStore, watch, afterId, signal)) {
    for (const row of rows) {
      const event = asThreadEvent(row, modes);
      if (event) yield { ...event, id: row.id };
    }
  }
}
