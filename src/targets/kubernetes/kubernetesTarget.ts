/**
 * The Kubernetes target (GRAPHX_RUNNER=kubernetes): a revision is a set of plain objects applied server-side under
 * the field manager `graphx` in its namespace; its rollout is the Deployment's, watched until the new pods are
 * available while the old ones keep serving (maxUnavailable 0). App traffic goes through the cluster's route, never
 * through the control plane. Everything is found again by name and label, so a rollout run twice (a worker killed
 * mid-rollout) applies the same objects to the same Deployment and waits on it again.
 */
import { InstanceStore } from '../../db/repositories/instances';
import type { GraphxConfig } from '../../config';
import type { Db } from '../../db/knex';
import { PipelineState } from '../../db/repositories/pipelineState';
import { logger } from '@graphx/kit/logger';
import { loadRevisionSpec, type RevisionSpec } from '../../pipeline/revisionSpec';
import type { SecretBox } from '../../security/secretBox';
import { DeployFailedError, type AppLogSource, type DeploymentTarget, type RolloutProgress } from '../target';
import { KubeApi, KubeApiError } from './kubeApi';
import { deploymentSelector, FIELD_MANAGER, LABELS } from './names';
import { MANAGED_KINDS, revisionObjects, sizing, autoscaled, type KubeObject } from './objects';
import { deploymentUrl } from './objects/network';
import { PodLogSource } from './podLogSource';
import { kubernetesServiceTokenId, revisionInput, revisionNamespace, revisionServiceToken } from './revisionInput';
import { DEFAULT_WAIT_TIMINGS, waitForRollout, type RolloutWaitTimings } from './rolloutWatch';
import type { KubeSettings } from './settings';

export const REPLICA_HANDOVER_MANAGER = 'graphx-replica-handover';

export interface KubernetesTargetOptions {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  settings: KubeSettings;
  api: KubeApi;
  timings?: Partial<RolloutWaitTimings>;
}

const quiet: RolloutProgress = { phase: () => {} };

/** A refusal of the API server (invalid object, forbidden, unknown kind) will not change by retrying. */
function permanent(error: unknown): unknown {
  if (
    error instanceof KubeApiError &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 409 &&
    error.status !== 429
  ) {
    return new DeployFailedError(`The cluster refused an object: ${error.message}`);
  }
  return error;
}

export class KubernetesTarget implements DeploymentTarget {
  private readonly timings: RolloutWaitTimings;

  constructor(readonly options: KubernetesTargetOptions) {
    this.timings = {
      ...DEFAULT_WAIT_TIMINGS,
      timeoutMs: options.settings.rolloutTimeoutSeconds * 1000,
      ...options.timings,
    };
  }

  /** The target for a control plane's configuration: credentials from KUBECONFIG or the pod's service account. */
  static open(options: Omit<KubernetesTargetOptions, 'api'>): KubernetesTarget {
    return new KubernetesTarget({ ...options, api: KubeApi.load(options.settings.context, options.settings.kubeconfig) });
  }

  get api(): KubeApi {
    return this.options.api;
  }

  /** The objects of `spec`'s revision, applied in order; returns them as the server stored them. */
  async applyRevision(spec: RevisionSpec): Promise<{ objects: KubeObject[]; url: string }> {
    const { db, secretBox, settings } = this.options;
    const { token } = await revisionServiceToken(db, secretBox, spec);
    const input = revisionInput(spec, settings, secretBox, token);
    const applied: KubeObject[] = [];
    try {
      for (const object of revisionObjects(input, settings)) applied.push(await this.applyObject(object, input.resourceSpec));
    } catch (error) {
      throw permanent(error);
    }
    return { objects: applied, url: deploymentUrl(input, settings) };
  }

  /**
   * An autoscaled Deployment's replicas belong to its HPA: graphx leaves them out of what it applies. Removing a
   * field graphx owned would reset it to 1, so ownership is first shared with a handover manager that keeps the
   * current count (the documented way to hand a field over); a new Deployment starts at min_scale.
   */
  private async applyObject(object: KubeObject, resourceSpec: Parameters<typeof sizing>[0]): Promise<KubeObject> {
    const { api } = this;
    if (object.kind !== 'Deployment') return api.apply(object);
    const component = object.metadata.labels?.[LABELS.component] === 'queue' ? 'queue' : 'api';
    const size = sizing(resourceSpec, component);
    if (!autoscaled(size)) return api.apply(object);
    const live = await api.get('apps/v1', 'Deployment', object.metadata.namespace, object.metadata.name);
    const ownsReplicas = (candidate: KubeObject | null) =>
      ((candidate?.metadata.managedFields as any[] | undefined) ?? []).some(
        (entry) => entry.manager === FIELD_MANAGER && entry.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined,
      );
    let replicas = (live?.spec as { replicas?: number } | undefined)?.replicas ?? size.minScale;
    let handOver = ownsReplicas(live);
    if (!live) {
      await api.apply({ ...object, spec: { ...(object.spec as object), replicas: size.minScale } });
      replicas = size.minScale;
      handOver = true;
    }
    if (handOver) {
      const { apiVersion, kind, metadata } = object;
      await api.apply(
        { apiVersion, kind, metadata: { name: metadata.name, namespace: metadata.namespace }, spec: { replicas } },
        REPLICA_HANDOVER_MANAGER,
      );
    }
    return api.apply(object);
  }

  /**
   * Applies the revision's objects and waits for its Deployments to roll out; the old pods serve until the new ones
   * are available. On failure the active revision's objects are applied again (or, with none, the deployment's
   * objects removed), so the cluster runs what graphx says is active.
   * @throws DeployFailedError with Kubernetes' reason when the pods cannot start.
   */
  async rollout(spec: RevisionSpec, progress: RolloutProgress = quiet): Promise<string> {
    const namespace = revisionNamespace(spec, this.options.settings);
    const { objects, url } = await this.applyRevision(spec);
    progress.phase('applied', `Applied ${objects.length} objects to namespace ${namespace} (field manager ${FIELD_MANAGER}).`);
    const workloads = objects.filter((object) => object.kind === 'Deployment' || object.kind === 'StatefulSet');
    try {
      for (const workload of workloads.filter((object) => object.kind === 'Deployment')) {
        await waitForRollout(
          this.api,
          {
            namespace,
            name: workload.metadata.name,
            deploymentId: spec.deploymentId,
            revisionId: spec.revisionId,
            component: workload.metadata.labels?.[LABELS.component] ?? 'api',
          },
          this.timings,
          progress,
        );
      }
    } catch (error) {
      if (error instanceof DeployFailedError) await this.restoreActive(spec, progress);
      throw error;
    }
    await new PipelineState(this.options.db).markRevisionActive(spec.deploymentId, spec.revisionId, url);
    progress.phase('switched', `Revision ${spec.revisionId} is serving at ${url}.`);
    await this.prune(spec.deploymentId, namespace, objects);
    const { id: serving } = await revisionServiceToken(this.options.db, this.options.secretBox, spec);
    await new InstanceStore(this.options.db).deleteServiceTokens(spec.deploymentId, serving);
    return url;
  }

  /** After a failed rollout: the active revision again, or nothing when none was ever active. */
  private async restoreActive(failed: RevisionSpec, progress: RolloutProgress): Promise<void> {
    const { db, secretBox } = this.options;
    const row = await db('deployments').where({ id: failed.deploymentId }).first('active_revision_id');
    const activeId: string | null = row?.active_revision_id ?? null;
    try {
      if (activeId && activeId !== failed.revisionId) {
        const active = await loadRevisionSpec(db, secretBox, activeId);
        const { objects } = await this.applyRevision(active);
        await this.prune(failed.deploymentId, revisionNamespace(active, this.options.settings), objects);
        progress.phase('restored', `Revision ${activeId} keeps serving; the failed revision's objects were replaced.`);
      } else if (!activeId) {
        await this.deleteObjects(failed.deploymentId, () => {});
        progress.phase('restored', "The failed revision's objects were removed (no earlier revision was serving).");
      }
    } catch (error) {
      logger.error(
        { err: error, deploymentId: failed.deploymentId },
        'could not restore the active revision after a failed rollout',
      );
    }
  }

  /** Deletes the deployment's objects that are not among `keep` (an autoscaler no longer wanted, older Secrets). */
  private async prune(deploymentId: string, namespace: string, keep: KubeObject[]): Promise<void> {
    const kept = new Set(keep.map((object) => `${object.kind}/${object.metadata.name}`));
    for (const { apiVersion, kind } of MANAGED_KINDS) {
      if (kind === 'PersistentVolumeClaim') continue; // Data stays until the deployment is deleted.
      const found = await this.api
        .list(apiVersion, kind, namespace, { labelSelector: deploymentSelector(deploymentId) })
        .catch((error: unknown) => (error instanceof KubeApiError && error.status === 404 ? [] : Promise.reject(error)));
      for (const object of found) {
        if (!kept.has(`${kind}/${object.metadata.name}`))
          await this.api.delete(apiVersion, kind, namespace, object.metadata.name);
      }
    }
  }

  /** Deletes every object of the deployment in every managed namespace and waits until its pods are gone. */
  private async deleteObjects(deploymentId: string, onWait: () => void): Promise<void> {
    const selector = deploymentSelector(deploymentId);
    for (const namespace of this.options.settings.managedNamespaces) {
      for (const { apiVersion, kind } of MANAGED_KINDS) {
        await this.api.deleteCollection(apiVersion, kind, namespace, selector);
      }
    }
    const deadline = Date.now() + 120_000;
    for (;;) {
      let left = 0;
      for (const namespace of this.options.settings.managedNamespaces) {
        for (const kind of ['Pod', 'ReplicaSet'] as const) {
          const apiVersion = kind === 'Pod' ? 'v1' : 'apps/v1';
          left += (await this.api.list(apiVersion, kind, namespace, { labelSelector: `${LABELS.deployment}=${deploymentId}` }))
            .length;
        }
      }
      if (left === 0) return;
      if (Date.now() > deadline)
        throw new Error(`${left} pods or replica sets of deployment ${deploymentId} are still terminating`);
      onWait();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Removes every object of the deployment (its pods go with them) and its service tokens. */
  async stopDeployment(deploymentId: string, onWait: () => void = () => {}): Promise<void> {
    await this.deleteObjects(deploymentId, onWait);
    await new InstanceStore(this.options.db).deleteServiceTokens(deploymentId);
  }

  deploymentUrl(routeKey: string): string {
    const { route } = this.options.settings;
    return `${route.scheme}://${routeKey}.${route.baseDomain}`;
  }

  /**
   * After a restart: the cluster kept running, so this reconciles instead of starting anything: every active
   * revision's objects are applied again (a no-op unless someone changed them), a few deployments at a time.
   */
  async restoreActiveInstances(): Promise<void> {
    await this.reconcileActive();
  }

  /**
   * Live deployments whose active revision this target rolled out (its service token row is the mark): one that ran on
   * another runner before GRAPHX_RUNNER changed, or shares the database with one, is never applied to the cluster.
   */
  private async deploymentsOnCluster(): Promise<Array<{ id: string; active_revision_id: string }>> {
    const active: Array<{ id: string; active_revision_id: string }> = await this.options
      .db('deployments')
      .whereNotNull('active_revision_id')
      .whereNull('deleted_at')
      .select('id', 'active_revision_id');
    const tokenIds = active.map((row) => kubernetesServiceTokenId(row.active_revision_id));
    const recorded = await new InstanceStore(this.options.db).existingServiceTokenIds(tokenIds);
    const owned = active.filter((_row, index) => recorded.has(tokenIds[index] as string));
    if (owned.length < active.length) {
      logger.info(
        { reconciled: owned.length, leftAlone: active.length - owned.length },
        'deployments whose active revision never ran on the cluster are left to their runner',
      );
    }
    return owned;
  }

  /** restoreActiveInstances, counting the objects applied (bench/). */
  async reconcileActive(concurrency = 8): Promise<number> {
    const { db, secretBox } = this.options;
    const deployments = await this.deploymentsOnCluster();
    let applied = 0;
    let next = 0;
    const worker = async () => {
      while (next < deployments.length) {
        const deployment = deployments[next++] as { id: string; active_revision_id: string };
        try {
          const spec = await loadRevisionSpec(db, secretBox, deployment.active_revision_id);
          const { objects } = await this.applyRevision(spec);
          applied += objects.length; // Not `applied += await …`: that reads `applied` before the await.
        } catch (error) {
          logger.error({ err: error, deploymentId: deployment.id }, 'could not reconcile the objects of a deployment');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, deployments.length) }, worker));
    return applied;
  }

  /** The app output of its deployments, read from their pods when asked (the API's source on this runner). */
  appLogSource(): AppLogSource {
    return new PodLogSource(this.api, this.options.settings.managedNamespaces);
  }

  /** Apps keep running on the cluster when graphx stops: only this process's connections close. */
  async stopAll(): Promise<void> {
    this.api.close();
  }
}
