/**
 * The deployment's own PostgreSQL database: created once before its first rollout, dropped on teardown.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { ensureDeploymentDatabase } from '../src/pipeline/deploymentDatabase';
import type { ActivityDeps } from './deps';

/** The `provisionDatabase` activity: creates database and role unless they exist; AWAITING_DATABASE → READY. */
export function provisionDatabaseActivity({ db, secretBox }: ActivityDeps) {
  return async ({ deploymentId }: { deploymentId: string }): Promise<void> => {
    const state = new PipelineState(db);
    const deployment = await state.deployment(deploymentId);
    if (!deployment || deployment.deletedAt || deployment.status === 'AWAITING_DELETE') {
      // Creating a database for a deployment being deleted would leave it behind after the teardown.
      throw ApplicationFailure.nonRetryable(`Deployment ID ${deploymentId} is deleted or being deleted.`, 'DeployFailed');
    }
    const databaseName = await ensureDeploymentDatabase(db, secretBox, deploymentId);
    await state.markDatabaseProvisioned(deploymentId, databaseName);
  };
}
