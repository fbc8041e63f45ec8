/**
 * Reads revisions, their logs, and retry / interrupt. Reads come from the row alone (one primary-key lookup): the
 * revision workflow writes every status change there itself before it goes on, so the row is the workflow's status.
 * Only retry and interrupt, which act on the workflow, ask it for its live status first.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { DeploymentRepository } from '../db/repositories/deployments';
import { pageVersions, RevisionRepository, type RevisionRecord, type RevisionVersion } from '../db/repositories/revisions';
import { ConflictError, deploymentNotFound, revisionNotFound } from '@graphx/kit/errors';
import { queryRevisionStatus, retryRevision, signalRevision } from '../pipeline/deploymentWorkflowClient';
import { deploymentWorkflowId, interruptQueuedRevisionSignal } from '../../workflows/messages';
import {
  FAILED_REVISION_STATUSES,
  IN_PROGRESS_REVISION_STATUSES,
  NOT_STARTED_REVISION_STATUSES,
  SETTLED_REVISION_STATUSES,
  type RevisionStatus,
} from '@graphx/contract/statuses';
import type { DeploymentService, DeploymentServiceDeps } from './service';
import type { RevisionStatusWatch } from './revisionStatusWatch';
import { revisionView } from './views';
import { BoundedMap } from '@graphx/kit/boundedMap';
import { PageCache } from './pageCache';

/** Statuses after which the database row is final: no need to ask the workflow. */
const SETTLED: ReadonlySet<RevisionStatus> = new Set(SETTLED_REVISION_STATUSES);
const IN_PROGRESS: ReadonlySet<RevisionStatus> = new Set(IN_PROGRESS_REVISION_STATUSES);
const FAILED: ReadonlySet<RevisionStatus> = new Set(FAILED_REVISION_STATUSES);
const NOT_STARTED: ReadonlySet<RevisionStatus> = new Set(NOT_STARTED_REVISION_STATUSES);

/** Serialized revision views by id, with the row version each was made from (listBody, getJson); bounded, oldest dropped. */
const serializedViews = new BoundedMap<string, { version: string; json: string }>(10_000);
/** Whole pages as sent (listBody), by tenant, deployment and page parameters; at most 1,000 and 16 MiB. */
const serializedPages = new PageCache(1_000, 16 * 1024 * 1024);

export class RevisionService {
  constructor(
    private readonly deps: DeploymentServiceDeps,
    private readonly deployments: DeploymentService,
  ) {}

  async get(tenantId: string, deploymentId: string, revisionId: string): Promise<Record<string, unknown>> {
    return this.view(await this.find(tenantId, deploymentId, revisionId));
  }

  /**
   * `get` as its JSON text, for the poll CI repeats: the revision's row version is read (one short column) and its view
   * serialized once per version, as listJson does for pages; only a new or changed row is read whole.
   */
  async getJson(tenantId: string, deploymentId: string, revisionId: string): Promise<string> {
    const repository = new RevisionRepository(this.deps.db);
    const version = await repository.versionOfTenant(tenantId, deploymentId, revisionId);
    if (version === null) {
      await this.assertDeployment(tenantId, deploymentId);
      throw revisionNotFound(revisionId);
    }
    const [json] = (await this.viewsJson(repository, [{ id: revisionId, version }])).views;
    // Deleted between the two reads (its deployment deleted meanwhile): as a later read would answer.
    if (json === undefined) throw revisionNotFound(revisionId);
    return json;
  }

  /**
   * The long-poll form of `get`: answers as soon as the status differs from `fromStatus`, or after `timeoutMs` with
   * the unchanged revision. Waiting costs no Temporal call and no query of its own (see RevisionStatusWatch).
   */
  async getWhenChanged(
    tenantId: string,
    deploymentId: string,
    revisionId: string,
    wait: { fromStatus: string; timeoutMs: number; watch: RevisionStatusWatch; abort?: AbortSignal },
  ): Promise<Record<string, unknown>> {
    const revision = await this.find(tenantId, deploymentId, revisionId);
    if (revision.status !== wait.fromStatus) return this.view(revision);
    await wait.watch.waitForChange(revisionId, wait.fromStatus, wait.timeoutMs, wait.abort);
    return this.get(tenantId, deploymentId, revisionId);
  }

  /**
   * A page of revisions, newest first, as the bytes of its JSON text. CI and the console poll it, and most of its rows
   * never change again: the page is read as (id, row version), and a page read before from exactly that list is
   * answered as sent then (PageCache). Otherwise each row's view is serialized once per version and the views joined;
   * only new or changed rows are read whole.
   */
  async listBody(
    tenantId: string,
    deploymentId: string,
    filters: { statuses?: string[]; limit: number; offset: number },
  ): Promise<Buffer> {
    const repository = new RevisionRepository(this.deps.db);
    const versions = await repository.pageOfTenant(tenantId, deploymentId, filters);
    // One query answers the common case; only an empty page needs to know whether the deployment exists.
    if (versions === '') await this.assertDeployment(tenantId, deploymentId);
    const key = `${tenantId} ${deploymentId} ${filters.statuses?.join(',') ?? ''} ${filters.limit} ${filters.offset}`;
    const cached = serializedPages.get(key, versions);
    if (cached !== undefined) return cached;
    const page = pageVersions(versions);
    const { views, exact } = await this.viewsJson(repository, page);
    const body = Buffer.from(`{"resources":[${views.join(',')}],"offset":${filters.offset + views.length}}`);
    // Kept only when made from exactly the listed row versions (no row changed or went between the two reads).
    if (exact) serializedPages.set(key, versions, body);
    return body;
  }

  async retry(tenantId: string, deploymentId: string, revisionId: string): Promise<void> {
    const revision = await this.find(tenantId, deploymentId, revisionId);
    const status = await this.liveStatus(revision);
    if (!FAILED.has(status)) {
      throw new ConflictError(
        `Revision ID ${revisionId} is ${status}; only a BUILD_FAILED or DEPLOY_FAILED revision can be retried.`,
      );
    }
    // The workflow has the last word (its status may have moved since the read above): a refusal is a 409 too.
    const outcome = await retryRevision(this.deps.temporal, revisionId);
    if (outcome.kind === 'refused') throw new ConflictError(outcome.reason);
    if (outcome.kind === 'gone') {
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
    // The local runners copy their apps' output into app_logs; a cluster's kubelets keep it (ApiDeps.appLogSource).
    const source = this.deps.appLogSource ?? new RevisionRepository(this.deps.db);
    const logs = await source.appLogs(deploymentId, options);
    return { logs, next_offset: logs.length === options.limit ? options.offset + logs.length : null };
  }

  private view(revision: RevisionRecord): Record<string, unknown> {
    return revisionView(revision, this.deployments.secretsForView(revision));
  }

  /**
   * The views of `page` as JSON text, in its order: each serialized once per row version and remembered; only rows
   * new or changed since are read whole. A row deleted between the two reads (its deployment deleted meanwhile) is
   * left out, as a later read would. `exact` tells that every view is of the version `page` lists.
   */
  private async viewsJson(repository: RevisionRepository, page: RevisionVersion[]): Promise<{ views: string[]; exact: boolean }> {
    const views = new Map<string, string>();
    const stale: string[] = [];
    for (const { id, version } of page) {
      const cached = serializedViews.get(id);
      if (cached?.version === version) views.set(id, cached.json);
      else stale.push(id);
    }
    let exact = true;
    if (stale.length > 0) {
      const read = await repository.findWithVersions(stale);
      const listed = new Map(page.map(({ id, version }) => [id, version]));
      exact = read.length === stale.length;
      for (const { revision, version } of read) {
        const json = JSON.stringify(this.view(revision));
        serializedViews.set(revision.id, { version, json });
        views.set(revision.id, json);
        if (listed.get(revision.id) !== version) exact = false;
      }
    }
    return { views: page.flatMap(({ id }) => views.get(id) ?? []), exact };
  }

  private async liveStatus(revision: RevisionRecord): Promise<RevisionStatus> {
    if (SETTLED.has(revision.status)) return revision.status;
    return (await queryRevisionStatus(this.deps.temporal, revision.id))?.status ?? revision.status;
  }

  private async assertDeployment(tenantId: string, deploymentId: string): Promise<void> {
    if (!(await new DeploymentRepository(this.deps.db).find(tenantId, deploymentId))) throw deploymentNotFound(deploymentId);
  }

  private async find(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRecord> {
    const revision = await new RevisionRepository(this.deps.db).findOfTenant(tenantId, deploymentId, revisionId);
    if (revision) return revision;
    await this.assertDeployment(tenantId, deploymentId);
    throw revisionNotFound(revisionId);
  }
}
