/**
 * The database mirror of workflow state. Updates are guarded: a revision never leaves a final status (DEPLOYED,
 * SKIPPED, INTERRUPTED) and a deployment never leaves AWAITING_DELETE. A refused update is logged, not thrown:
 * these run as local activities that retry without limit, and a stale write must not wedge a workflow.
 */
import type { DeploymentStatus } from '@graphx/contract/statuses';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { logger } from '@graphx/kit/logger';
import type { ActivityDeps } from './deps';
import type { RecordRevisionStatusInput } from './types';

/** The `recordRevisionStatus` activity. */
export function recordRevisionStatusActivity({ db, target }: ActivityDeps) {
  return async (input: RecordRevisionStatusInput): Promise<void> => {
    const state = new PipelineState(db);
    const updated = await state.recordRevisionStatus(input);
    if (!updated) {
      logger.warn({ revisionId: input.revisionId, status: input.status }, 'revision status update refused (missing or final)');
      return;
    }
    if (input.status === 'DEPLOYED') {
      // The rollout sets the URL; this keeps it once a revision is DEPLOYED even if that write was lost.
      const deployment = await state.deployment(updated.deploymentId);
      if (deployment && !deployment.url) {
        await state.setUrlIfMissing(
          updated.deploymentId,
          input.url ?? target.deploymentUrl(deployment.routeKey ?? deployment.name),
        );
      }
    }
  };
}

/** The `recordDeploymentStatus` activity. */
export function recordDeploymentStatusActivity({ db }: ActivityDeps) {
  return async (input: { deploymentId: string; status: DeploymentStatus }): Promise<void> => {
    // Only the API's delete marks a deployment for deletion; a forged delete signal must not mark it (teardown
    // checks that mark first).
    if (input.status === 'AWAITING_DELETE') return;
    const recorded = await new PipelineState(db).recordDeploymentStatus(input.deploymentId, input.status);
    if (!recorded) logger.warn({ deploymentId: input.deploymentId, status: input.status }, 'deployment status update refused');
  };
}
