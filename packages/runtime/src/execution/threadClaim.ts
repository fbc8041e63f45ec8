/**
 * Taking a thread for a new run under the request's `multitask_strategy`, as the LangGraph server answers a busy
 * thread: `reject` 409; `interrupt` stops the running run (recorded interrupted) and runs; `rollback` stops it and its
 * owner deletes the run and the checkpoints it wrote, then runs; `enqueue` waits for the running run to end. Waiting
 * is bounded (then 409) and event-driven (runCoordinator.ts); the run that waits executes here once it has the thread.
 */
import { ConflictError, NotFoundError } from '@graphx/kit/errors';
import type { RunStore } from '../storage/runStore';
import type { ContainmentFilter } from '../storage/threadStore';
import type { RunCoordinator } from './runCoordinator';

export type MultitaskStrategy = 'reject' | 'interrupt' | 'rollback' | 'enqueue';

/** The strategy of a run that names none: the Python server's (`enqueue`), not the JS dev server's (`reject`). */
export const DEFAULT_MULTITASK_STRATEGY: MultitaskStrategy = 'enqueue';

export interface ClaimLimits {
  /** Longest wait of an `enqueue` run for the thread. */
  enqueueWaitMs: number;
}

/**
 * Claims `threadId` for `runId`, waiting or stopping the running run as `strategy` says.
 * @returns `created`: the claim made the thread.
 * @throws NotFoundError when the thread is missing (and not to be created) or outside the filter.
 * @throws ConflictError when the thread stays busy (`reject` at once, the others after their bounded wait).
 */
export async function claimThread(
  deps: { coordinator: RunCoordinator; runs: RunStore; limits: ClaimLimits },
  claim: {
    threadId: string;
    runId: string;
    strategy: MultitaskStrategy;
    filter: ContainmentFilter;
    graphMetadata: Record<string, unknown>;
    createWithMetadata: Record<string, unknown> | null;
    /** The caller found no thread a moment ago (ThreadLeases.claim's `likelyMissing`). */
    likelyMissing?: boolean;
  },
): Promise<{ created: boolean }> {
  const { coordinator } = deps;
  const { threadId, runId, strategy } = claim;
  const leaseMs = coordinator.leases.leaseMs;
  // A stopped run needs its owner's next heartbeat at worst, or its lease to expire if the owner is gone.
  const waitMs = strategy === 'enqueue' ? deps.limits.enqueueWaitMs : 2 * leaseMs + 5_000;
  const deadline = Date.now() + waitMs;
  let cancelled: string | null = null;
  let likelyMissing = claim.likelyMissing ?? false;
  for (;;) {
    const { filter, graphMetadata, createWithMetadata } = claim;
    const result = await coordinator.leases.claim(threadId, runId, filter, graphMetadata, createWithMetadata, likelyMissing);
    likelyMissing = false;
    if (result.kind === 'claimed') {
      // The run of a process that died mid-run never ends by itself: it is recorded as failed.
      if (result.takenOverRunId) await deps.runs.setStatusIfRunning(result.takenOverRunId, 'error');
      return { created: result.created === true };
    }
    if (result.kind === 'missing') throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    if (strategy === 'reject') throw new ConflictError(`Thread ${threadId} is already running a task. Wait for it to finish.`);
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new ConflictError(
        `Thread ${threadId} is still running a task after ${Math.round(waitMs / 1000)} s (multitask_strategy ${strategy}).`,
      );
    }
    if ((strategy === 'interrupt' || strategy === 'rollback') && result.busyRunId && result.busyRunId !== cancelled) {
      cancelled = result.busyRunId;
      await coordinator.requestCancel(threadId, result.busyRunId, strategy);
    }
    await coordinator.waitForRelease(threadId, Math.min(remaining, leaseMs));
  }
}
