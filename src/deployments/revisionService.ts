/** Reads revisions (live status from the workflow, database as fallback), their logs, and retry / interrupt. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { DeploymentRepository } from '../db/repositories/deployments';
import { RevisionRepository, type RevisionRecord } from '../db/repositories/revisions';
import { ConflictError, deploymentNotFound, revisionNotFound } from '../errors';
import { queryRevisionStatus, signalRevision } from '../pipeline/deploymentWorkflowClient';
import {
  deploymentWorkflowId,
  FAILED_REVISION_STATUSES,
  IN_PROGRESS_REVISION_STATUSES,
  interruptQueuedRevisionSignal,
  NOT_STARTED_REVISION_STATUSES,
  SETTLED_REVISION_STATUSES,
  type RevisionStatus,
} from '../../workflows/messages';
import type { DeploymentService, DeploymentServiceDeps } from './service';
import { revisionView } from './views';

/** Statuses after which the database row is final: no need to ask the workflow. */
const SETTLED: ReadonlySet<RevisionStatus> = new Set(SETTLED_REVISION_STATUSES);
const IN_PROGRESS: ReadonlySet<RevisionStatus> = new Set(IN_PROGRESS_REVISION_STATUSES);
const FAILED: ReadonlySet<RevisionStatus> = new Set(FAILED_REVISION_STATUSES);
const NOT_STARTED: ReadonlySet<RevisionStatus> = new Set(NOT_STARTED_REVISION_STATUSES);

export class RevisionService {
  constructor(
    private readonly deps: DeploymentServiceDeps,
    private readonly deployments: DeploymentService,
  ) {}

  async get(tenantId: string, deploymentId: string, revisionId: string): Promise<Record<string, unknown>> {
    const revision = await this.find(tenantId, deploymentId, revisionId);
    return this.view(revision);
  }

  async list(tenantId: string, deploymentId: string, filters: { statuses?: string[]; limit: number; offset: number }) {
    await this.assertDeployment(tenantId, deploymentId);
    const revisions = await new RevisionRepository(this.deps.db).list(deploymentId, filters);
    const resources = await Promise.all(revisions.map((revision) => this.view(revision)));
    return { resources, offset: filters.offset + resources.length };
  }

  async retry(tenantId: string, deploymentId: string, revisionId: string): Promise<void> {
    const revision = await this.find(tenantId, deploymentId, revisionId);
    const status = await this.liveStatus(revision);
    if (!FAILED.has(status)) {
      throw new ConflictError(
        `Revision ID ${revisionId} is ${status}; only a BUILD_FAILED or DEPLOY_FAILED revision can be retried.`,
      );
    }
    if (!(await signalRevision(this.deps.temporal, revisionId, 'retry'))) {
      throw new ConflictError(
        `Revision ID ${revisionId} no longer waits for a retry (its 7-day window ended or a newer revision replaced it).`,
      );
    }
  }

  async interrupt(tenantId: string, deploymentId: string, revisionId: string): Promise<void> {
    const revision = await this.find(tenantId, deploymentId, revisionId);
    const status = await this.liveStatus(revision);
    if (!IN_PROGRESS.has(status) && !FAILED.has(status)) {
      throw new ConflictError(`Revision ID ${revisionId} is ${status}; only a revision in progress can be interrupted.`);
    }
    if (await signalRevision(this.deps.temporal, revisionId, 'interrupt')) return;
    if (NOT_STARTED.has(status)) {
      try {
        await this.deps.temporal.workflow
          .getHandle(deploymentWorkflowId(deploymentId))
          .signal(interruptQueuedRevisionSignal, { revisionId });
        return;
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
    throw new ConflictError(`Revision ID ${revisionId} has no running pipeline to interrupt.`);
  }

  async logs(
    tenantId: string,
    deploymentId: string,
    revisionId: string,
    options: { order: 'asc' | 'desc'; limit: number; offset: number },
  ) {
    await this.find(tenantId, deploymentId, revisionId);
    const logs = await new RevisionRepository(this.deps.db).logs(revisionId, options);
    return { logs, next_offset: logs.length === options.limit ? options.offset + logs.length : null };
  }

  async appLogs(tenantId: string, deploymentId: string, options: { order: 'asc' | 'desc'; limit: number; offset: number }) {
    await this.assertDeployment(tenantId, deploymentId);
    const logs = await new RevisionRepository(this.deps.db).appLogs(deploymentId, options);
    return { logs, next_offset: logs.length === options.limit ? options.offset + logs.length : null };
  }

  private async view(revision: RevisionRecord): Promise<Record<string, unknown>> {
    const live = SETTLED.has(revision.status) ? null : await queryRevisionStatus(this.deps.temporal, revision.id);
    return revisionView(revision, this.deployments.decryptSecrets(revision), live);
  }

  private async liveStatus(revision: RevisionRecord): Promise<RevisionStatus> {
    if (SETTLED.has(revision.status)) return revision.status;
    return (await queryRevisionStatus(this.deps.temporal, revision.id))?.status ?? revision.status;
  }

  private async assertDeployment(tenantId: string, deploymentId: string): Promise<void> {
    if (!(await new DeploymentRepository(this.deps.db).find(tenantId, deploymentId))) throw deploymentNotFound(deploymentId);
  }

  private async find(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRecord> {
    await this.assertDeployment(tenantId, deploymentId);
    const revision = await new RevisionRepository(this.deps.db).find(deploymentId, revisionId);
    if (!revision) throw revisionNotFound(revisionId);
    return revision;
  }
}
