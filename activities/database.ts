/**
 * The deployment's own PostgreSQL database: created once before its first rollout, dropped on teardown.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ensureDeploymentDatabase } from '../src/pipeline/deploymentDatabase';
import type { ActivityDeps } from './deps';

/** The `provisionDatabase` activity: creates database and role unless they exist; AWAITING_DATABASE → READY. */
export function provisionDatabaseActivity({ db, secretBox }: ActivityDeps) {
  return async ({ deploymentId }: { deploymentId: string }): Promise<void> => {
    const deployment = await db('deployments').where({ id: deploymentId }).first('status', 'deleted_at');
    if (!deployment || deployment.deleted_at || deployment.status === 'AWAITING_DELETE') {
      // Creating a database for a deployment being deleted would leave it behind after the teardown.
      throw ApplicationFailure.nonRetryable(`Deployment ID ${deploymentId} is deleted or being deleted.`, 'DeployFailed');
    }
    const databaseName = await ensureDeploymentDatabase(db, secretBox, deploymentId);
    await db('deployments').where({ id: deploymentId }).whereNull('deleted_at').update({ database_name: databaseName });
    await db('deployments')
      .where({ id: deploymentId, status: 'AWAITING_DATABASE' })
      .whereNull('deleted_at')
      .update({ status: 'READY', updated_at: db.fn.now() });
  };
}
