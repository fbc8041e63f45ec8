/**
 * The deployment target port: what the pipeline asks of wherever revisions run. The activities depend on this
 * interface only; the worker's composition root (src/cli/worker.ts, src/stack.ts) wires the implementation
 * (ProcessTarget or ContainerTarget, chosen by src/targets/choose.ts; a Kubernetes target would implement the same
 * five operations).
 */
import type { LogLine } from '../db/repositories/revisions';
import type { RevisionSpec } from '../pipeline/revisionSpec';

/** The app never became healthy: a permanent failure whose message the user sees. */
export class DeployFailedError extends Error {
  override name = 'DeployFailedError';
}

/** How a rollout reports progress (the activity heartbeats and writes revision logs from it). */
export interface RolloutProgress {
  phase: (phase: string, line?: string) => void;
  /** True once the caller gave up (activity cancelled): waiting stops and the new instances are stopped. */
  cancelled?: () => boolean;
}

export interface DeploymentTarget {
  /**
   * Makes `spec`'s revision the one serving its deployment and resolves with the deployment's URL.
   * @throws DeployFailedError when the app exits or never becomes healthy (permanent).
   */
  rollout(spec: RevisionSpec, progress?: RolloutProgress): Promise<string>;
  /** Stops every instance of a deployment; `onWait` is called while waiting (heartbeats). */
  stopDeployment(deploymentId: string, onWait?: () => void): Promise<void>;
  /** Public URL of a deployment, from its route key. */
  deploymentUrl(routeKey: string): string;
  /** After a restart of the stack: brings back the instances of every deployment with an active revision. */
  restoreActiveInstances(): Promise<void>;
  /** Stops every instance this process started or adopted (shutdown). */
  stopAll(graceMs?: number): Promise<void>;
}

/** Which lines of a deployment's app output a reader wants: oldest (`asc`) or newest (`desc`) first, a page of them. */
export interface AppLogPage {
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/**
 * Where the API reads a deployment's app output. The local runners copy it into `app_logs` (the default source);
 * on Kubernetes the kubelets keep it and the API asks the cluster (src/targets/kubernetes/podLogSource.ts).
 */
export interface AppLogSource {
  /** Up to `page.limit` lines after skipping `page.offset`, ids increasing in the order the lines were written. */
  appLogs(deploymentId: string, page: AppLogPage): Promise<LogLine[]>;
}
