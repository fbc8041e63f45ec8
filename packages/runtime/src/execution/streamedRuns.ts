/**
 * A run whose events someone follows as they come (a streamed or waited run, or a protocol-v2 `run.start`): it runs
 * in this process when its thread is free, else it waits its turn in the database queue (`enqueue`).
 */
import { ConflictError } from '@graphx/kit/errors';
import type { AuthUser } from '../auth/authUser';
import type { RunQueueStore } from '../storage/runQueueStore';
import type { Run } from '../storage/runStore';
import type { BackgroundRuns } from './backgroundRuns';
import type { StreamEvent } from './graphStream';
import type { RunEvents } from './runEvents';
import type { PreparedRun, RunRequest, RunService } from './runService';
import { DEFAULT_MULTITASK_STRATEGY } from './threadClaim';

export interface StreamedRunDeps {
  runService: RunService;
  runQueue: RunQueueStore;
  backgroundRuns: BackgroundRuns;
  runEvents: RunEvents;
}

/**
 * A streamed `enqueue` run on a busy thread (or one with runs already queued) becomes a queued background run, so it
 * waits in the database, not in this request; its follower reads it like a join stream. `prepared` when the thread
 * could be taken at once (the run then executes here). `reserveHere`: only this instance may start the queued run
 * while it keeps the reservation (a response here follows it). `threadMissing`: the caller found no thread a moment
 * ago, so none of its runs can be queued (queued runs belong to threads that exist), and the claim creates it first.
 */
export async function prepareOrQueue(
  deps: StreamedRunDeps,
  user: AuthUser | null,
  threadId: string | null,
  request: RunRequest,
  reserveHere = true,
  threadMissing = false,
): Promise<{ prepared?: PreparedRun; queued?: Run }> {
  if (!threadId || (request.multitask_strategy ?? DEFAULT_MULTITASK_STRATEGY) !== 'enqueue')
    return { prepared: await deps.runService.prepare(user, threadId, request, { waitForThread: true, threadMissing }) };
  if (threadMissing || (await deps.runQueue.withStatus(threadId, ['pending'])).length === 0) {
    try {
      return { prepared: await deps.runService.prepare(user, threadId, request, { waitForThread: false, threadMissing }) };
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  return { queued: await deps.backgroundRuns.create(user, threadId, request, { reserveHere }) };
}

/**
 * The events of a run executing here. A run on a thread also keeps them (RunEvents) for join, thread and protocol
 * streams on any instance, and its events carry their ids (as the anchor's: 0 for `metadata`, then one up per event).
 */
export async function* executeHere(
  deps: StreamedRunDeps,
  prepared: PreparedRun,
  signal: AbortSignal,
  /** The events go to an SSE stream (RunEvents.publish's `toWire`). */
  toWire = false,
): AsyncGenerator<StreamEvent & { id?: string }> {
  const { run_id: runId, thread_id: threadId } = prepared.run;
  if (!threadId) return yield* deps.runService.execute(prepared, signal);
  deps.runEvents.open(runId, { threadId });
  try {
    for await (const event of deps.runService.execute(prepared, signal)) yield deps.runEvents.publish(runId, event, toWire);
  } finally {
    void deps.runEvents.close(runId);
  }
}
