/**
 * App instances as containers of the revision's image: non-root, read-only root filesystem with a tmpfs /tmp, all
 * capabilities dropped and no-new-privileges (DockerEngine adds both to every container), a pids limit, CPU and memory
 * from `resource_spec`, the app's port published on 127.0.0.1 only, and no way to the host but the deployment's socket
 * directory (hostSockets.ts). Rows are `local_instances` like the local target's: the gateway routes to `port`, the
 * container is named after the row (`graphx-app-<row id>`) and labelled with its deployment and revision, so any
 * worker finds, adopts or removes it. Output is copied from the engine's log into `app_logs`, exactly once across
 * processes: the row's `log_cursor_second` holds the Unix second of the last copied line and `log_cursor_lines` how many
 * lines of that second were copied (engines give log timestamps to the second).
 */
import crypto from 'node:crypto';
import type { GraphxConfig } from '../../config';
import { confineAppNetwork, releaseAppNetwork } from '../../containers/appNetworkFirewall';
import type { ContainerEngine, ContainerLogLine } from '../../containers/engine';
import { RevisionImages } from '../../containers/revisionImages';
import { RUNTIME_UID } from '@graphx/contract/image';
import type { Db } from '../../db/knex';
import { logger } from '@graphx/kit/logger';
import { findFreePort } from '@graphx/kit/net/ports';
import { deploymentDatabaseName, deploymentDatabasePassword } from '../../pipeline/deploymentDatabase';
import type { RevisionSpec } from '../../pipeline/revisionSpec';
import { containerEnvironment } from '../../pipeline/runtimeEnv';
import { hashToken, type SecretBox } from '../../security/secretBox';
import { DeployFailedError } from '../target';
import { InstanceStore, type InstanceRow } from '../../db/repositories/instances';
import { SupervisedInstances } from '../gateway/supervisedInstances';
import type { InstanceRunner } from '../gateway/instanceRunner';
import { checkOk } from '../process/processInstances';
import { API_SOCKET_NAME, CONTAINER_SOCKET_DIR, type DeploymentSockets } from './hostSockets';

/** The port the app listens on inside its container. */
export const CONTAINER_PORT = 8000;
/** Processes (threads included) one container may have: a fork bomb stops here. */
export const PIDS_LIMIT = 256;
export const LABELS = { instance: 'graphx.instance', deployment: 'graphx.deployment', revision: 'graphx.revision' };
const DEFAULT_MEMORY_MB = 1024;
const MAX_LINES_PER_COPY = 2000;

export interface ContainerInstancesDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  engine: ContainerEngine;
  sockets: DeploymentSockets;
  onDeath: (row: InstanceRow) => void;
}

export function containerName(instanceId: string): string {
  return `graphx-app-${instanceId}`;
}

/**
 * The deployment's own network: isolated from every other deployment's, so one tenant's app cannot reach another's
 * containers by address (the engine's default bridge would let it); the outside world stays reachable.
 */
export function deploymentNetworkName(deploymentId: string): string {
  return `graphx-deployment-${deploymentId}`;
}

/** CPU and memory of an instance from `resource_spec`: limits are hard, `cpu` and `memory_mb` what it is promised. */
export function containerResources(spec: RevisionSpec): {
  memoryMb: number;
  memoryReservationMb?: number;
  cpus?: number;
  cpuShares?: number;
} {
  const resources = spec.sourceConfig.resource_spec ?? {};
  const memoryMb = resources.memory_limit_mb ?? resources.memory_mb ?? DEFAULT_MEMORY_MB;
  const reservation = resources.memory_mb && resources.memory_mb < memoryMb ? resources.memory_mb : undefined;
  const cpus = resources.cpu_limit ?? resources.cpu ?? undefined;
  return {
    memoryMb,
    memoryReservationMb: reservation,
    cpus: cpus ?? undefined,
    cpuShares: resources.cpu ? Math.max(2, Math.round(resources.cpu * 1024)) : undefined,
  };
}

export class ContainerInstances extends SupervisedInstances implements InstanceRunner {
  // Engine logs are read every second; a container that stopped on its own (checked every 2 s) is reported once.
  constructor(private readonly deps: ContainerInstancesDeps) {
    super({ tickMs: 1000, deathCheckTicks: 2 }, deps.onDeath);
  }

  async start(spec: RevisionSpec): Promise<InstanceRow> {
    const { db, engine, secretBox } = this.deps;
    if (!spec.image) throw new DeployFailedError(`Revision ${spec.revisionId} has no image to run.`);
    const id = crypto.randomUUID();
    const serviceToken = `gxs_${crypto.randomBytes(32).toString('base64url')}`;
    const row: InstanceRow = {
      id,
      deployment_id: spec.deploymentId,
      revision_id: spec.revisionId,
      port: await findFreePort(),
      pid: null,
      status: 'starting',
      service_token_id: crypto.randomUUID(),
      stdout_path: null,
      stderr_path: null,
      container_name: containerName(id),
    };
    await new InstanceStore(db).create(row, hashToken(serviceToken));
    const role = deploymentDatabaseName(spec.deploymentId);
    const socketDir = await this.deps.sockets.ensure(spec.deploymentId, role);
    const password = encodeURIComponent(deploymentDatabasePassword(secretBox, spec.deploymentId));
    const resources = containerResources(spec);
    const env = containerEnvironment(spec, {
      port: CONTAINER_PORT,
      databaseUri: `postgresql://${role}:${password}@localhost/${role}?host=${CONTAINER_SOCKET_DIR}`,
      controlPlaneSocket: `${CONTAINER_SOCKET_DIR}/${API_SOCKET_NAME}`,
      serviceToken,
      memoryMb: resources.memoryMb,
      builtImage: RevisionImages.isBuiltRef(spec.image.ref),
    });
    try {
      const network = deploymentNetworkName(spec.deploymentId);
      // Before the container starts: its first packet may already be aimed at the host.
      await confineAppNetwork(await engine.ensureIsolatedNetwork(network, { [LABELS.deployment]: spec.deploymentId }));
      await engine.runContainer({
        name: containerName(id),
        network,
        image: spec.image.ref,
        env,
        labels: { [LABELS.instance]: id, [LABELS.deployment]: spec.deploymentId, [LABELS.revision]: spec.revisionId },
        user: `${RUNTIME_UID}:${RUNTIME_UID}`,
        publish: { containerPort: CONTAINER_PORT, hostPort: row.port },
        mounts: [{ source: socketDir, target: CONTAINER_SOCKET_DIR }],
        readOnlyRootfs: true,
        tmpfs: { '/tmp': 'rw,nosuid,nodev,size=128m,mode=1777' },
        pidsLimit: PIDS_LIMIT,
        ...resources,
      });
    } catch (error) {
      await this.stop(row, 0).catch(() => {});
      throw new DeployFailedError(`The app's container could not start: ${(error as Error).message}`);
    }
    this.supervise(row);
    return row;
  }

  /** The row's container runs this revision on the recorded port; its socket forwarders are listening again. */
  async adoptable(row: InstanceRow, spec: RevisionSpec): Promise<boolean> {
    const info = await this.deps.engine.inspectContainer(containerName(row.id));
    const ours = info?.state === 'running' && info.labels[LABELS.revision] === spec.revisionId && info.hostPort === row.port;
    if (ours) await this.deps.sockets.ensure(spec.deploymentId, deploymentDatabaseName(spec.deploymentId));
    return ours;
  }

  async isAlive(row: InstanceRow): Promise<boolean> {
    const info = await this.deps.engine.inspectContainer(containerName(row.id));
    return info?.state === 'running';
  }

  async ownsRow(row: InstanceRow): Promise<boolean> {
    return (await this.deps.engine.inspectContainer(containerName(row.id))) !== null;
  }

  async isHealthy(row: InstanceRow): Promise<boolean> {
    return (await checkOk(row.port)) && (await this.isAlive(row));
  }

  async stop(row: InstanceRow, graceMs: number, onWait?: () => void): Promise<void> {
    const { db, engine } = this.deps;
    await this.haltAndCopy(row, async () => {
      const heartbeat = onWait ? setInterval(onWait, 1000) : null;
      try {
        await engine.stopContainer(containerName(row.id), Math.ceil(graceMs / 1000));
      } finally {
        if (heartbeat) clearInterval(heartbeat);
      }
    });
    await engine.removeContainer(containerName(row.id));
    await new InstanceStore(db).markStopped(row);
    // The forwarders go with the deployment only: a replacement after a crash starts right after this stop.
    const deployment = await db('deployments').where({ id: row.deployment_id }).first('deleted_at', 'status');
    const deleting = !deployment || deployment.deleted_at !== null || deployment.status === 'AWAITING_DELETE';
    if (deleting && (await new InstanceStore(db).live(row.deployment_id)).length === 0)
      await this.deps.sockets.remove(row.deployment_id);
  }

  async lastLines(row: InstanceRow, count = 10): Promise<string[]> {
    const text = await this.deps.engine.containerLogs(containerName(row.id), count).catch(() => '');
    return text.split('\n').filter((line) => line.trim() !== '');
  }

  /**
   * Podman 4.3 on cgroup v1 (runc, cgroupfs) does not set OOMKilled: a SIGKILL graphx did not send (it forgets an
   * instance before stopping it) is said to be the memory limit's too, naming the other possible cause.
   */
  async describeDeath(row: InstanceRow): Promise<string> {
    const info = await this.deps.engine.inspectContainer(containerName(row.id));
    const limit = `its limit is ${await this.memoryLimitOf(row)} MB`;
    if (info?.oomKilled) return `Instance on port ${row.port} was killed: out of memory (${limit}); starting a replacement.`;
    if (info?.exitCode === 137) {
      return `Instance on port ${row.port} was killed (SIGKILL): out of memory (${limit}) unless someone killed it; starting a replacement.`;
    }
    const code = info?.exitCode ?? 'unknown';
    return `Instance on port ${row.port} exited (code ${code}); starting a replacement.`;
  }

  private async memoryLimitOf(row: InstanceRow): Promise<number> {
    const revision = await this.deps.db('revisions').where({ id: row.revision_id }).first('source_config');
    return containerResources({ sourceConfig: revision?.source_config ?? {} } as RevisionSpec).memoryMb;
  }

  async canRun(spec: RevisionSpec): Promise<boolean> {
    return !!spec.image && (await this.deps.engine.inspectImage(spec.image.ref)) !== null;
  }

  /** The deployment is gone from here (every instance stopped): its network goes too. */
  async deploymentStopped(deploymentId: string): Promise<void> {
    try {
      const removed = await this.deps.engine.removeNetwork(deploymentNetworkName(deploymentId));
      if (removed) await releaseAppNetwork(removed);
    } catch (error) {
      // A network left behind holds no tenant data; the delete itself has succeeded.
      logger.warn({ err: error, deploymentId }, 'could not remove the deployment network');
    }
  }

  async hurryStopping(graceMs: number): Promise<void> {
    const seconds = Math.ceil(graceMs / 1000);
    await Promise.all([...this.stopping.values()].map((row) => this.deps.engine.stopContainer(containerName(row.id), seconds)));
  }

  override close(): void {
    super.close();
    void this.deps.sockets.close();
  }

  protected async hasDied(row: InstanceRow): Promise<boolean> {
    return !(await this.isAlive(row).catch(() => true));
  }

  /** Copies the container log's lines after the row's cursor (second, lines of that second). */
  protected async copyOutputNow(row: InstanceRow): Promise<void> {
    await new InstanceStore(this.deps.db).copyOutput(row, async (cursor) => {
      const second = cursor.log_cursor_second;
      const lines = await this.deps.engine.containerLogLines(containerName(row.id), second);
      const fresh = newLines(lines, second, cursor.log_cursor_lines);
      if (!fresh) return null;
      return {
        lines: fresh.copied.map((line) => ({
          level: line.stream === 'stderr' ? ('error' as const) : ('info' as const),
          message: line.text,
        })),
        cursor: { log_cursor_second: fresh.second, log_cursor_lines: fresh.count },
      };
    });
  }
}

/**
 * Lines after the cursor (second, lines of that second already copied), at most MAX_LINES_PER_COPY, and the cursor
 * after them. Null when nothing is new.
 */
export function newLines(
  lines: ContainerLogLine[],
  second: number,
  copiedInSecond: number,
): { copied: ContainerLogLine[]; second: number; count: number } | null {
  const atCursor = lines.filter((line) => line.second <= second).length;
  const skip = Math.min(copiedInSecond, atCursor);
  const taken = lines.slice(0, skip + MAX_LINES_PER_COPY);
  const copied = taken.slice(skip);
  const last = taken.at(-1);
  if (copied.length === 0 || !last) return null;
  return { copied, second: last.second, count: taken.filter((line) => line.second === last.second).length };
}
