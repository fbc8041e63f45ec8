/**
 * Following a run that may not have started yet (join stream, a streamed `enqueue` run queued behind a busy thread):
 * its events once this instance executes it (RunEvents), or, for a run another instance executes, its end (the
 * thread's values) once it comes, since events live only in the memory of the instance that produces them.
 */
import type { ThreadStore } from '../storage/threadStore';
import type { Run } from '../storage/runStore';
import { FINISHED_STATUSES } from './backgroundRuns';
import type { StreamEvent } from './graphStream';
import type { RunEvents } from './runEvents';

const JOIN_TIMEOUT_MS = 24 * 3600_000;

export interface RunFollowerDeps {
  runEvents: RunEvents;
  threads: ThreadStore;
  /** The run as the queue table has it now. */
  getRun: (runId: string, threadId: string | null) => Promise<Run | null>;
}

/**
 * Yields the run's events after `lastEventId` (`-1`: all kept) and live ones to its end, or only the thread's final
 * values when another instance ran it. Ends when `signal` aborts.
 */
export async function* followRun(
  deps: RunFollowerDeps,
  threadId: string | null,
  runId: string,
  lastEventId: string | null,
  signal: AbortSignal,
): AsyncGenerator<StreamEvent & { id?: string }> {
  const deadline = Date.now() + JOIN_TIMEOUT_MS;
  for (let delay = 25; !signal.aborted; delay = Math.min(delay * 2, 250)) {
    // A pending run may start here any moment: its log opens when it starts, so poll both the log and the row.
    if (deps.runEvents.has(runId)) {
      yield* deps.runEvents.follow(runId, lastEventId, signal);
      return;
    }
    const run = await deps.getRun(runId, threadId);
    if (!run || Date.now() > deadline) return;
    if (FINISHED_STATUSES.has(run.status)) {
      if (deps.runEvents.has(runId)) continue;
      if (threadId) yield { event: 'values', data: (await deps.threads.get(threadId, {}))?.values ?? null };
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, delay);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}
