/**
 * The local target: revisions run as supervised processes on this machine behind one gateway
 * (`http://127.0.0.1:<gateway port>/<deployment-name>`). What runs where is recorded in `local_instances`, so the
 * gateway (in the API process) and the rollouts (in whichever worker process) agree through the database.
 */
import fs from 'node:fs';
import type { GraphxConfig } from '../../config';
import type { Db } from '../../db/knex';
import { logger } from '../../logger';
import type { SecretBox } from '../../security/secretBox';
import { controlPlaneDatabaseUrl } from '../../pipeline/deploymentDatabase';
import { startGateway } from './gateway';
import { RUNTIME_COMMAND, type InstanceCommand } from '../../pipeline/runtimeEnv';
import { InstanceManager } from './instances';
import { stopGroup } from '../../os/processes';
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
import { buildPaths, loadRevisionSpec, type RevisionSpec } from '../../pipeline/revisionSpec';
import { liveInstances, type InstanceRow } from './instanceRows';

export { DeployFailedError, type RolloutProgress } from '../target';
export type { InstanceCommand } from '../../pipeline/runtimeEnv';

export interface LocalTargetOptions {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  /** What an instance runs; defaults to `node bin/graphx.js runtime`. Tests inject a small script. */
  instanceCommand?: InstanceCommand;
  timings?: Partial<RolloutTimings>;
}

const DEFAULT_TIMINGS: RolloutTimings = { healthTimeoutMs: 120_000, routeSettleMs: 1_000, drainTimeoutMs: 35_000 };
/** The gateway caches routes for this long; rollouts wait `routeSettleMs` (longer) before stopping old instances. */
const ROUTE_TTL_MS = 500;

const quietProgress: RolloutProgress = { phase: () => {} };

export class LocalTarget implements DeploymentTarget {
  private readonly instances: InstanceManager;
  private readonly timings: RolloutTimings;
  private controlPlaneUrl: string;
  private gatewayPort: number | null = null;

  constructor(readonly options: LocalTargetOptions) {
    this.timings = { ...DEFAULT_TIMINGS, ...options.timings };
    this.controlPlaneUrl = options.config.publicUrl;
    this.instances = new InstanceManager({
      config: options.config,
      db: options.db,
      secretBox: options.secretBox,
      instanceCommand: options.instanceCommand ?? RUNTIME_COMMAND,
      controlPlaneUrl: () => this.controlPlaneUrl,
      onDeath: (row) => {
        this.replaceDeadInstance(row).catch((error: unknown) =>
          logger.error({ err: error, deploymentId: row.deployment_id }, 'could not replace a dead app instance'),
        );
      },
    });
  }

  /**
   * Supervision: a serving instance whose process died is replaced by a new one of the same revision, under the
   * deployment's lock (a rollout in progress decides instead). A replacement that never becomes healthy is stopped:
   * a crash loop ends in 503 and its output in the app logs, not in endless restarts.
   */
  private async replaceDeadInstance(dead: InstanceRow): Promise<void> {
    const { db, secretBox } = this.options;
    await withDeploymentLock(
      this.lockUrl(),
      dead.deployment_id,
      () => {},
      async () => {
        const current = await db('local_instances').where({ id: dead.id }).first('status');
        if (current?.status !== 'serving') return;
        await this.instances.stop(dead, 0);
        await db('app_logs').insert({
          deployment_id: dead.deployment_id,
          revision_id: dead.revision_id,
          level: 'error',
          message: `Instance on port ${dead.port} (pid ${dead.pid}) exited; starting a replacement.`,
        });
        const spec = await loadRevisionSpec(db, secretBox, dead.revision_id);
        const fresh = await this.instances.start(spec);
        try {
          await waitUntilHealthy(this.instances, [fresh], this.timings.healthTimeoutMs, quietProgress);
        } catch (error) {
          await this.instances.stop(fresh, 2000);
          throw error;
        }
        await db('local_instances')
          .where({ id: fresh.id, status: 'starting' })
          .update({ status: 'serving', updated_at: db.fn.now() });
      },
    );
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
    return `${this.gatewayUrl()}/${routeKey}`;
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

  /** Stops every instance of a deployment (any process may have started them: they are found by pid). */
  async stopDeployment(deploymentId: string, onWait: () => void = () => {}): Promise<void> {
    await withDeploymentLock(this.lockUrl(), deploymentId, onWait, async () => {
      const rows = await liveInstances(this.options.db, deploymentId);
      await Promise.all(rows.map((row) => this.instances.stop(row, 10_000, onWait)));
    });
  }

  /** After a restart of the stack: brings back the instances of every deployment with an active revision. */
  async restoreActiveInstances(): Promise<void> {
    const deployments: Array<{ id: string; active_revision_id: string }> = await this.options
      .db('deployments')
      .whereNotNull('active_revision_id')
      .whereNull('deleted_at')
      .select('id', 'active_revision_id');
    // Only builds in this data dir can run here; another stack sharing the database keeps its own deployments.
    const runnable = deployments.filter((deployment) =>
      fs.existsSync(buildPaths(this.options.config.dataDir, deployment.active_revision_id).src),
    );
    await Promise.all(
      runnable.map((deployment) =>
        this.restoreDeployment(deployment.id, deployment.active_revision_id).catch((error: unknown) =>
          logger.error({ err: error, deploymentId: deployment.id }, 'could not restore the instances of a deployment'),
        ),
      ),
    );
  }

  private async restoreDeployment(deploymentId: string, revisionId: string): Promise<void> {
    const { db, secretBox } = this.options;
    await withDeploymentLock(
      this.lockUrl(),
      deploymentId,
      () => {},
      async () => {
        const spec = await loadRevisionSpec(db, secretBox, revisionId);
        const rows = await ensureRevisionInstances(db, this.instances, spec, quietProgress);
        await waitUntilHealthy(this.instances, rows, this.timings.healthTimeoutMs, quietProgress);
        const active = await db('deployments')
          .where({ id: deploymentId })
          .whereNull('deleted_at')
          .first('active_revision_id', 'url');
        // A rollout may have moved on while we waited for the lock: only the still-active revision is switched back in.
        if (active?.active_revision_id !== revisionId) return;
        // The gateway of this process may listen on a new port after a restart: its URL is the one that works now.
        const url = this.gatewayPort !== null || !active.url ? this.deploymentUrl(spec.routeKey) : active.url;
        await switchRoute(db, spec, rows, url);
        const leftovers = (await liveInstances(db, deploymentId)).filter((row) => row.status === 'draining');
        if (leftovers.length > 0) await drainOldInstances(db, this.instances, deploymentId, this.timings, quietProgress);
      },
    );
  }

  /**
   * Stops every instance this process started or adopted, and hurries those already being stopped (a drain of a
   * rollout in progress waits up to its own timeout): each gets `graceMs`, then SIGKILL.
   */
  async stopAll(graceMs = 10_000): Promise<void> {
    const ids = this.instances.supervisedIds();
    const hurried = this.instances.stoppingRows().map((row) => (row.pid ? stopGroup(row.pid, graceMs) : Promise.resolve()));
    if (ids.length > 0) {
      const rows: InstanceRow[] = await this.options.db('local_instances').whereIn('id', ids).whereNot({ status: 'stopped' });
      await Promise.all(rows.map((row) => this.instances.stop(row, graceMs)));
    }
    await Promise.all(hurried);
    this.instances.close();
  }
}
