/**
 * What the shared rollout (rollout.ts) and supervision (instanceTarget.ts) need from whatever runs an instance: host
 * processes (../process/processInstances.ts) or containers (../container/containerInstances.ts). Both record their instances as
 * `local_instances` rows, so the gateway, the deployment lock, the route switch and the drain are one code path.
 */
import type { RevisionSpec } from '../../pipeline/revisionSpec';
import type { InstanceRow } from '../../db/repositories/instances';

export interface InstanceRunner {
  /** Records, then starts, one new instance of the revision; it listens on 127.0.0.1:`row.port`. */
  start(spec: RevisionSpec): Promise<InstanceRow>;
  /** Takes over an instance another (maybe dead) process started: its output, its death. */
  supervise(row: InstanceRow): void;
  /** True when the row's instance runs and is really this revision's (a pid or a name may have been reused). */
  adoptable(row: InstanceRow, spec: RevisionSpec): Promise<boolean>;
  /** True while the instance's process or container runs. */
  isAlive(row: InstanceRow): Promise<boolean>;
  /** Alive and `GET /ok` answers 200. */
  isHealthy(row: InstanceRow): Promise<boolean>;
  /** SIGTERM, SIGKILL after `graceMs`; then its last output copied, the row stopped, its service token deleted. */
  stop(row: InstanceRow, graceMs: number, onWait?: () => void): Promise<void>;
  /** The last lines the instance wrote, for a failure message. */
  lastLines(row: InstanceRow, count?: number): Promise<string[]>;
  /** One app-log line saying how a supervised instance ended (exit code, OOM kill), before it is replaced. */
  describeDeath(row: InstanceRow): Promise<string>;
  /** Whether this runner can start the revision here (its build or image is present). */
  canRun(spec: RevisionSpec): Promise<boolean>;
  /** Called once every instance of a deployment is stopped (delete): frees what the runner kept per deployment. */
  deploymentStopped?(deploymentId: string): Promise<void>;
  /** True when the row's instance was started by this stack (its data dir's processes, its engine's containers). */
  ownsRow(row: InstanceRow): Promise<boolean>;
  /** Ids of the instances this process supervises. */
  supervisedIds(): string[];
  /** Hurries the stops under way (a drain may wait up to its timeout): each gets `graceMs`, then SIGKILL. */
  hurryStopping(graceMs: number): Promise<void>;
  /** Stops copying output and watching (the instances keep running). */
  close(): void;
}
