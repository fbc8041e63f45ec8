/**
 * A deployment target whose instances are `local_instances` rows behind the gateway
 * (`http://127.0.0.1:<gateway port>/<deployment-name>`): the local target (host processes) and the container target
 * both are this class with their own InstanceRunner. What runs where is recorded in `local_instances`, so the gateway
 * (in the API process) and the rollouts (in whichever worker process) agree through the database.
 */
import type { GraphxConfig } from '../../config';
import type { Db } from '../../db/knex';
import { logger } from '@graphx/kit/logger';
import type { SecretBox } from '../../security/secretBox';
import { controlPlaneDatabaseUrl } from '../../pipeline/deploymentDatabase';
import { PipelineState } from '../../db/repositories/pipelineState';
import { startGateway } from './gateway';
import {
  drainOldInstances,
  ensureRevisionInstances,
  rolloutRevision,
  switchRoute,
  waitUntilHealthy,
  withDeploymentLock,
  type RolloutTimings,
} from './rollout';
import type { DeploymentTarget, RolloutProgress } from '../target';
import { loadRevisionSpec, type RevisionSpec } from '../../pipeline/revisionSpec';
import { InstanceStore, type InstanceRow } from '../../db/repositories/instances';
import type { InstanceRunner } from './instanceRunner';

export interface InstanceTargetOptions {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  timings?: Partial<RolloutTimings>;
}

/** What a target gives its runner: where instances reach the control plane, and a way to report a death. */
export interface RunnerHooks {
  controlPlaneUrl: () => string;
  onDeath: (row: InstanceRow) => void;
}

const DEFAULT_TIMINGS: RolloutTimings = { healthTimeoutMs: 120_000, routeSettleMs: 1_000, drainTimeoutMs: 35_000 };
/** The gateway caches routes for this long; rollouts wait `routeSettleMs` (longer) before stopping old instances. */
const ROUTE_TTL_MS = 500;

const quietProgress: RolloutProgress = { phase: () => {} };

export class InstanceTarget implements DeploymentTarget {
  protected readonly instances: InstanceRunner;
  private readonly timings: RolloutTimings;
  private controlPlaneUrl: string;
  private gatewayPort: number | null = null;

  constructor(
    readonly options: InstanceTargetOptions,
    makeRunner: (hooks: RunnerHooks) => InstanceRunner,
  ) {
    this.timings = { ...DEFAULT_TIMINGS, ...options.timings };
    this.controlPlaneUrl = options.config.internalApiUrl;
    this.instances = makeRunner({
      controlPlaneUrl: () => this.controlPlaneUrl,
      onDeath: (row) => {
        this.replaceDeadInstance(row).catch(async (error: unknown) => {
          logger.error({ err: error, deploymentId: row.deployment_id }, 'could not replace a dead app instance');
          await this.servingUnknown(row.deployment_id);
        });
      },
    });
  }

  /**
   * Supervision: a serving instance whose process or container died is replaced by a new one of the same revision,
   * under the deployment's lock (a rollout in progress decides instead). A replacement that never becomes healthy is
   * stopped: a crash loop ends in 503 and its output in the app logs, not in endless restarts.
   */
  private async replaceDeadInstance(dead: InstanceRow): Promise<void> {
    const { db, secretBox } = this.options;
    await withDeploymentLock(
      this.lockUrl(),
      dead.deployment_id,
      () => {},
      async () => {
        const store = new InstanceStore(db);
        if ((await store.statusOf(dead.id)) !== 'serving') return;
        const message = await this.instances.describeDeath(dead);
        await this.instances.stop(dead, 0);
        await store.appendAppLogs(dead, [{ level: 'error', message }]);
        const spec = await loadRevisionSpec(db, secretBox, dead.revision_id);
        const fresh = await this.instances.start(spec);
        try {
          await waitUntilHealthy(this.instances, [fresh], this.timings.healthTimeoutMs, quietProgress);
        } catch (error) {
          await this.instances.stop(fresh, 2000);
          throw error;
        }
        await store.markServing(fresh.id);
        await new PipelineState(db).markServingKnown(dead.deployment_id);
      },
    );
  }

  /**
   * The deployment is UNKNOWN (CONTRACT §2.2: a target that cannot tell) while none of its active revision's instances
   * serves after a failed replacement or restore; a later rollout, restore or replacement makes it READY again.
   */
  private async servingUnknown(deploymentId: string): Promise<void> {
    const serving = await new InstanceStore(this.options.db).hasServing(deploymentId).catch(() => true);
    if (!serving) await new PipelineState(this.options.db).markServingUnknown(deploymentId).catch(() => undefined);
  }

  private lockUrl(): string {
    return controlPlaneDatabaseUrl(this.options.config, this.options.db);
  }

  /** Where new instances reach the control-plane API (`GRAPHX_CONTROL_PLANE_URL`); the stack sets it once listening. */
  setControlPlaneUrl(url: string): void {
    this.controlPlaneUrl = url;
  }

  /** Public URL of a deployment behind the gateway (the gateway's real port once it listens in this process). */
  deploymentUrl(routeKey: string): string {
    return `${this.options.config.gatewayPublicUrl ?? this.gatewayUrl()}/${routeKey}`;
  }

  /** Base URL of the gateway. */
  gatewayUrl(): string {
    return `http://127.0.0.1:${this.gatewayPort ?? this.options.config.gatewayPort}`;
  }

  /** Starts the gateway listening; resolves with a function that closes it. */
  async startGateway(): Promise<() => Promise<void>> {
    const gateway = await startGateway({
      db: this.options.db,
      host: this.options.config.host,
      port: this.options.config.gatewayPort,
      routeTtlMs: ROUTE_TTL_MS,
      maxBodyBytes: this.options.config.gatewayMaxBodyBytes,
      publicUrl: this.options.config.gatewayPublicUrl,
    });
    this.gatewayPort = Number(new URL(gateway.url).port);
    return gateway.close;
  }

  /**
   * Starts the revision's instances, waits for health, switches the route and stops the old instances.
   * @throws DeployFailedError when the app exits or never answers `GET /ok`.
   */
  async rollout(spec: RevisionSpec, progress: RolloutProgress = quietProgress): Promise<string> {
    return rolloutRevision(
      this.lockUrl(),
      this.options.db,
      this.instances,
      spec,
      this.deploymentUrl(spec.routeKey),
      this.timings,
      progress,
    );
  }

  /** Stops every instance of a deployment (any process may have started them). */
  async stopDeployment(deploymentId: string, onWait: () => void = () => {}): Promise<void> {
    await withDeploymentLock(this.lockUrl(), deploymentId, onWait, async () => {
      const rows = await new InstanceStore(this.options.db).live(deploymentId);
      await Promise.all(rows.map((row) => this.instances.stop(row, 10_000, onWait)));
      await this.instances.deploymentStopped?.(deploymentId);
    });
  }

  /**
   * After a restart of the stack: brings back the instances of every deployment with an active revision, and stops
   * what a dead rollout left starting. Each deployment is read under its lock, so a rollout that switched it while
   * this waited is what gets restored: one set of instances per deployment.
   */
  async restoreActiveInstances(): Promise<void> {
    const { db } = this.options;
    const deploymentIds = await new InstanceStore(db).deploymentsToRestore();
    await Promise.all(
      deploymentIds.map((deploymentId) =>
        this.restoreDeployment(deploymentId).catch(async (error: unknown) => {
          logger.error({ err: error, deploymentId }, 'could not restore the instances of a deployment');
          await this.servingUnknown(deploymentId);
        }),
      ),
    );
  }

  private async restoreDeployment(deploymentId: string): Promise<void> {
    const { db, secretBox } = this.options;
    await withDeploymentLock(
      this.lockUrl(),
      deploymentId,
      () => {},
      async () => {
        const active = await db('deployments')
          .where({ id: deploymentId })
          .whereNull('deleted_at')
          .first('active_revision_id', 'url');
        const revisionId: string | null = active?.active_revision_id ?? null;
        // The lock is ours, so no rollout runs: an instance of another revision still starting is a dead rollout's.
        const orphans = (await new InstanceStore(db).live(deploymentId)).filter(
          (row) => row.status === 'starting' && row.revision_id !== revisionId,
        );
        for (const row of orphans) await this.instances.stop(row, 2000);
        if (!revisionId) return;
        const spec = await loadRevisionSpec(db, secretBox, revisionId);
        if (!(await this.instances.canRun(spec))) {
          await this.servingUnknown(deploymentId);
          return;
        }
        const rows = await ensureRevisionInstances(db, this.instances, spec, quietProgress);
        try {
          await waitUntilHealthy(this.instances, rows, this.timings.healthTimeoutMs, quietProgress);
        } catch (error) {
          for (const row of rows.filter((r) => r.status === 'starting')) await this.instances.stop(row, 2000);
          throw error;
        }
        // The gateway of this process may listen on a new port after a restart: its URL is the one that works now.
        const url = this.gatewayPort !== null || !active.url ? this.deploymentUrl(spec.routeKey) : active.url;
        await switchRoute(db, spec, rows, url);
        const leftovers = (await new InstanceStore(db).live(deploymentId)).filter((row) => row.status === 'draining');
        if (leftovers.length > 0) await drainOldInstances(db, this.instances, deploymentId, this.timings, quietProgress);
      },
    );
  }

  /**
   * Stops every live instance this stack started, whichever process supervises it: `graphx start`'s stop, whose
   * worker (a process of its own) leaves its apps running when it exits. Each gets `graceMs`, then SIGKILL.
   */
  async stopEveryInstance(graceMs = 10_000): Promise<void> {
    const rows = await new InstanceStore(this.options.db).liveAnywhere();
    const owned = await Promise.all(rows.map(async (row) => ((await this.instances.ownsRow(row)) ? row : null)));
    await Promise.all(owned.filter((row): row is InstanceRow => row !== null).map((row) => this.instances.stop(row, graceMs)));
    this.instances.close();
  }

  /**
   * Stops every instance this process started or adopted, and hurries those already being stopped (a drain of a
   * rollout in progress waits up to its own timeout): each gets `graceMs`, then SIGKILL.
   */
  async stopAll(graceMs = 10_000): Promise<void> {
    const ids = this.instances.supervisedIds();
    const hurried = this.instances.hurryStopping(graceMs);
    if (ids.length > 0) {
      const rows = await new InstanceStore(this.options.db).liveAnywhere(ids);
      await Promise.all(rows.map((row) => this.instances.stop(row, graceMs)));
    }
    await hurried;
    this.instances.close();
  }
}
