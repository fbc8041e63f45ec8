/**
 * The pipeline's writes to `deployments` and `revisions`, each guarded in SQL so a stale or repeated write cannot move
 * a row backwards: a revision never leaves a final status (DEPLOYED, SKIPPED, INTERRUPTED), a deployment never leaves
 * AWAITING_DELETE, a deleted deployment is never revived. Construct it on a transaction (`new PipelineState(trx)`)
 * to make several of them atomic, as the rollout's route switch does.
 */
import type { DbOrTx } from '../knex';
import {
  FINAL_REVISION_STATUSES,
  type DeploymentStatus,
  type PipelineStep,
  type RevisionStatus,
} from '@graphx/contract/statuses';

export interface RevisionStatusChange {
  revisionId: string;
  status: RevisionStatus;
  statusMessage?: string | null;
  failedStep?: PipelineStep | null;
  repoCommitSha?: string | null;
}

/** What the pipeline reads of a deployment before changing it. */
export interface DeploymentLifecycle {
  id: string;
  name: string;
  routeKey: string | null;
  url: string | null;
  status: DeploymentStatus;
  tracingProjectId: string | null;
  deleteTracingProject: boolean;
  deletedAt: Date | null;
}

export class PipelineState {
  constructor(private readonly db: DbOrTx) {}

  /**
   * Records a revision's status (and message, failed step, commit). Refused (returns null) when the revision is
   * missing or already final with another status; otherwise returns its deployment id.
   */
  async recordRevisionStatus(change: RevisionStatusChange): Promise<{ deploymentId: string } | null> {
    const update: Record<string, unknown> = {
      status: change.status,
      status_message: change.statusMessage ?? null,
      failed_step: change.failedStep ?? null,
      updated_at: this.db.fn.now(),
    };
    if (change.repoCommitSha) update.repo_commit_sha = change.repoCommitSha;
    const updated = await this.db('revisions')
      .where({ id: change.revisionId })
      .andWhere((where) => where.whereNotIn('status', FINAL_REVISION_STATUSES).orWhere('status', change.status))
      .update(update)
      .returning(['deployment_id']);
    return updated.length > 0 ? { deploymentId: updated[0].deployment_id } : null;
  }

  /** The commit a clone resolved the revision's ref to. */
  async recordCommitSha(revisionId: string, sha: string): Promise<void> {
    await this.db('revisions').where({ id: revisionId }).update({ repo_commit_sha: sha, updated_at: this.db.fn.now() });
  }

  /** The image the revision runs (built or pulled), recorded by the build step; a rebuild overwrites it. */
  async recordImage(revisionId: string, image: { ref: string; digest: string | null }): Promise<void> {
    await this.db('revisions')
      .where({ id: revisionId })
      .update({ image_ref: image.ref, image_digest: image.digest, updated_at: this.db.fn.now() });
  }

  /**
   * The route switch: the deployment's active revision and URL, and the revision DEPLOYED, in one write set (pass a
   * transaction): nobody can see `active_revision_id` on a revision that is not DEPLOYED yet. An interrupted or
   * skipped revision keeps its status.
   */
  async markRevisionActive(deploymentId: string, revisionId: string, url: string): Promise<void> {
    await this.db('deployments')
      .where({ id: deploymentId })
      .whereNull('deleted_at')
      .update({ active_revision_id: revisionId, url, updated_at: this.db.fn.now() });
    await this.markServingKnown(deploymentId);
    await this.db('revisions')
      .where({ id: revisionId })
      .whereNotIn('status', ['SKIPPED', 'INTERRUPTED'])
      .update({ status: 'DEPLOYED', status_message: null, failed_step: null, updated_at: this.db.fn.now() });
  }

  /** Sets the deployment's URL unless it has one (a lost rollout write is made good when DEPLOYED is recorded). */
  async setUrlIfMissing(deploymentId: string, url: string): Promise<void> {
    await this.db('deployments').where({ id: deploymentId }).whereNull('url').update({ url });
  }

  /** Records a deployment's status; refused (false) once deleted, or once AWAITING_DELETE for any other status. */
  async recordDeploymentStatus(deploymentId: string, status: DeploymentStatus): Promise<boolean> {
    const updated = await this.db('deployments')
      .where({ id: deploymentId })
      .whereNull('deleted_at')
      .andWhere((where) => where.whereNot('status', 'AWAITING_DELETE').orWhere('status', status))
      .update({ status, updated_at: this.db.fn.now() });
    return updated > 0;
  }

  /**
   * The target cannot tell whether the deployment's active revision is served: its instances died and could not be
   * brought back, or this target cannot run them at all. READY → UNKNOWN (other statuses are left as they are).
   */
  async markServingUnknown(deploymentId: string): Promise<void> {
    await this.db('deployments')
      .where({ id: deploymentId, status: 'READY' })
      .whereNull('deleted_at')
      .update({ status: 'UNKNOWN', updated_at: this.db.fn.now() });
  }

  /** The active revision's instances serve again: UNKNOWN → READY. */
  async markServingKnown(deploymentId: string): Promise<void> {
    await this.db('deployments')
      .where({ id: deploymentId, status: 'UNKNOWN' })
      .whereNull('deleted_at')
      .update({ status: 'READY', updated_at: this.db.fn.now() });
  }

  /** The deployment's database exists: records its name and moves AWAITING_DATABASE → READY. */
  async markDatabaseProvisioned(deploymentId: string, databaseName: string): Promise<void> {
    await this.db('deployments').where({ id: deploymentId }).whereNull('deleted_at').update({ database_name: databaseName });
    await this.db('deployments')
      .where({ id: deploymentId, status: 'AWAITING_DATABASE' })
      .whereNull('deleted_at')
      .update({ status: 'READY', updated_at: this.db.fn.now() });
  }

  /** The end of a teardown: the deployment is deleted (once). */
  async markDeploymentDeleted(deploymentId: string): Promise<void> {
    await this.db('deployments')
      .where({ id: deploymentId })
      .whereNull('deleted_at')
      .update({ deleted_at: this.db.fn.now(), updated_at: this.db.fn.now() });
  }

  /** A deployment as the pipeline sees it, deleted or not; null when there is no such row. */
  async deployment(deploymentId: string): Promise<DeploymentLifecycle | null> {
    const row = await this.db('deployments').where({ id: deploymentId }).first();
    if (!row) return null;
    return {
      id: row.id,
      name: row.name,
      routeKey: row.route_key ?? null,
      url: row.url,
      status: row.status,
      tracingProjectId: row.tracing_project_id,
      deleteTracingProject: Boolean(row.delete_tracing_project),
      deletedAt: row.deleted_at,
    };
  }

  /** Ids of every revision of a deployment. */
  async revisionIds(deploymentId: string): Promise<string[]> {
    return this.db('revisions').where({ deployment_id: deploymentId }).pluck('id');
  }
}
