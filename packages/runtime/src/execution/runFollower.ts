/**
 * Following a run (join stream, a streamed `enqueue` run queued behind a busy thread), on whichever instance executes
 * it: its events from this instance's memory when it runs here, else from the database (RunEventStore), woken by a
 * local publish or another instance's notification, and at the latest every second. A join sees the run's events
 * from its start (as the JS server, whose queue keeps what no joiner read), each with its id (as the JS server's); with
 * `Last-Event-ID` it resumes after that id (exclusive; `-1`: from the start). A run whose events are gone (ended long
 * ago) gives the thread's final values, and an `error` if it failed.
 */
import type { RunEventStore } from '../storage/runEventStore';
import { END_EVENT } from '../storage/runEventStore';
import type { Run } from '../storage/runStore';
import type { ThreadStore } from '../storage/threadStore';
import { FINISHED_STATUSES } from './backgroundRuns';
import type { StreamEvent } from './graphStream';
import type { RunEvents } from './runEvents';

const POLL_MS = 1_000;
// A run recorded as finished whose end mark has not arrived: how long its last events may still be on their way.
const END_GRACE_MS = 1_500;

export interface RunFollowerDeps {
  runEvents: RunEvents;
  eventStore: RunEventStore;
  threads: ThreadStore;
  /** The run as the database has it now. */
  getRun: (runId: string, threadId: string | null) => Promise<Run | null>;
}

export interface FollowOptions {
  lastEventId: string | null;
  /** Only events of these modes (with `metadata` and `error`); all when null. */
  streamModes: string[] | null;
}

/** Whether an event of the run goes to a joiner asking for `modes` (as the Python server's join filter). */
export function matchesStreamModes(event: string, modes: string[] | null): boolean {
  if (!modes || modes.length === 0 || event === 'metadata' || event === 'error') return true;
  const base = event.split('|')[0]!;
  if (modes.includes(base)) return true;
  return (modes.includes('messages') || modes.includes('messages-tuple')) && base.startsWith('messages');
}

/** Yields the run's events (see the file comment) until its end, or until `signal` aborts. */
export async function* followRun(
  deps: RunFollowerDeps,
  run: Run,
  options: FollowOptions,
  signal: AbortSignal,
): AsyncGenerator<StreamEvent & { id?: string }> {
  const { run_id: runId, thread_id: threadId } = run;
  const after = Number(options.lastEventId);
  let cursor = options.lastEventId !== null && Number.isInteger(after) && after >= 0 ? after + 1 : 0;
  let yielded = false;
  let finishedSince = 0;
  const out = (seq: number, event: string, data: unknown): StreamEvent & { id?: string } => ({ id: String(seq), event, data });

  while (!signal.aborted) {
    const local = deps.runEvents.local(runId);
    if (local && cursor >= local.firstKept) {
      const done = local.done;
      const batch = local.events.slice(Math.max(0, cursor - local.firstKept));
      for (const event of batch) {
        cursor = Number(event.id) + 1;
        if (!matchesStreamModes(event.event, options.streamModes)) continue;
        yielded = true;
        yield out(cursor - 1, event.event, event.data);
      }
      if (done) return;
      if (batch.length === 0) await deps.runEvents.waitForNews(runId, POLL_MS, signal);
      continue;
    }
    const rows = await deps.eventStore.forRun(runId, cursor);
    for (const row of rows) {
      if (row.event === END_EVENT) return;
      cursor = row.seq + 1;
      if (!matchesStreamModes(row.event, options.streamModes)) continue;
      yielded = true;
      yield out(row.seq, row.event, row.data);
    }
    if (rows.length > 0) continue;
    const now = await deps.getRun(runId, threadId);
    if (!now) return;
    if (FINISHED_STATUSES.has(now.status)) {
      finishedSince ||= Date.now();
      if (Date.now() - finishedSince > END_GRACE_MS) {
        if (!yielded) yield* finalState(deps, now);
        return;
      }
    }
    await deps.runEvents.waitForNews(runId, finishedSince ? END_GRACE_MS / 3 : POLL_MS, signal);
  }
}

/** What a joiner gets of a run whose events are no longer kept. */
async function* finalState(deps: RunFollowerDeps, run: Run): AsyncGenerator<StreamEvent> {
  if (run.thread_id) yield { event: 'values', data: (await deps.threads.get(run.thread_id, {}))?.values ?? null };
  if (run.status === 'error') yield { event: 'error', data: { error: 'RunError', message: `Run ${run.run_id} failed.` } };
}
