/**
 * The database mirror of workflow state. Updates are guarded: a revision never leaves a final status (DEPLOYED,
 * SKIPPED, INTERRUPTED) and a deployment never leaves AWAITING_DELETE. A refused update is logged, not thrown:
 * these run as local activities that retry without limit, and a stale write must not wedge a workflow.
 */
import type { DeploymentStatus } from '../workflows/messages';
import { logger } from '../src/logger';
import type { ActivityDeps } from './deps';
import type { RecordRevisionStatusInput } from './types';

const FINAL_REVISION_STATUSES = ['DEPLOYED', 'SKIPPED', 'INTERRUPTED'];

/** The `recordRevisionStatus` activity. */
export function recordRevisionStatusActivity({ db, target }: ActivityDeps) {
  return async (input: RecordRevisionStatusInput): Promise<void> => {
    const update: Record<string, unknown> = {
      status: input.status,
      status_message: input.statusMessage ?? null,
      failed_step: input.failedStep ?? null,
      updated_at: db.fn.now(),
    };
    if (input.repoCommitSha) update.repo_commit_sha = input.repoCommitSha;
    const updated = await db('revisions')
      .where({ id: input.revisionId })
      .andWhere((where) => where.whereNotIn('status', FINAL_REVISION_STATUSES).orWhere('status', input.status))
      .update(update)
      .returning(['deployment_id']);
    if (updated.length === 0) {
      logger.warn({ revisionId: input.revisionId, status: input.status }, 'revision status update refused (missing or final)');
      return;
    }
    if (input.status === 'DEPLOYED') {
      // The rollout sets the URL; this keeps it once a revision is DEPLOYED even if that write was lost.
      const deployment = await db('deployments').where({ id: updated[0].deployment_id }).first('name', 'route_key', 'url');
      if (deployment && !deployment.url) {
        await db('deployments')
          .where({ id: updated[0].deployment_id })
          .whereNull('url')
          .update({ url: input.url ?? target.deploymentUrl(deployment.route_key ?? deployment.name) });
      }
    }
  };
}

/** The `recordDeploymentStatus` activity. */
export function recordDeploymentStatusActivity({ db }: ActivityDeps) {
  return async (input: { deploymentId: string; status: DeploymentStatus }): Promise<void> => {
    const updated = await db('deployments')
      .where({ id: input.deploymentId })
      .whereNull('deleted_at')
      .andWhere((where) => where.whereNot('status', 'AWAITING_DELETE').orWhere('status', input.status))
      .update({ status: input.status, updated_at: db.fn.now() });
    if (updated === 0)
      logger.warn({ deploymentId: input.deploymentId, status: input.status }, 'deployment status update refused');
  };
}
