/**
 * Rollout through the target port (the target does the work; this adapts it to Temporal): heartbeats with the phase,
 * writes the rollout's lines to the revision log, honours cancellation, and turns an app that never becomes healthy
 * into a non-retryable DeployFailed carrying its last output lines.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { DeployFailedError } from '../src/targets/target';
import type { ActivityDeps } from './deps';
import { runRevisionStep, type SpecLoader } from './support/revisionStep';

/** The `rolloutRevision` activity. */
export function rolloutRevisionActivity(deps: ActivityDeps, load: SpecLoader) {
  return ({ revisionId }: { revisionId: string }): Promise<{ url: string }> =>
    runRevisionStep(deps, load, revisionId, async (spec, progress) => {
      const signal = Context.current().cancellationSignal;
      try {
        const url = await deps.target.rollout(spec, {
          phase: (phase, line) => progress.setPhase(phase, line),
          cancelled: () => signal.aborted,
        });
        progress.setPhase('done', `Serving at ${url}`);
        return { url };
      } catch (error) {
        if (signal.aborted) await Context.current().cancelled;
        if (error instanceof DeployFailedError) {
          const message = progress.redact(error.message);
          progress.line(message, 'error');
          throw ApplicationFailure.nonRetryable(message, 'DeployFailed');
        }
        throw error;
      }
    });
}
