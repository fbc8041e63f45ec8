/**
 * Waiting on a Deployment's rollout: a watch on the one Deployment (so completion is seen the moment the controller
 * writes it) with a GET every second as a safety net, and, beside it, a look at the revision's pods and the
 * kubelet's probe events for a reason that will not heal by waiting. Progress lines go to the revision log.
 */
import { delay } from '@graphx/kit/os/processes';
import { DeployFailedError, type RolloutProgress } from '../target';
import type { KubeApi } from './kubeApi';
import { collectionPath } from './kubeApi';
import { LABELS } from './names';
import { deploymentProblem, diagnosePods, rolloutState, type DiagnosisTimings, type PodProblem } from './podDiagnosis';

export interface RolloutWaitTimings extends DiagnosisTimings {
  timeoutMs: number;
  /** How often pods are examined and the Deployment read when the watch is quiet. */
  pollMs: number;
}

export const DEFAULT_WAIT_TIMINGS: RolloutWaitTimings = {
  timeoutMs: 600_000,
  pollMs: 1_000,
  unschedulableAfterMs: 120_000,
  notReadyAfterMs: 120_000,
};

export class RolloutCancelledError extends Error {
  override name = 'RolloutCancelledError';
}

/** Lines of the container that failed (its previous run's after a crash), for the failure message. */
async function lastLines(api: KubeApi, namespace: string, found: PodProblem): Promise<string[]> {
  if (!found.container) return [];
  const text = await api.podLogs(namespace, found.pod, found.container, { tailLines: 20, previous: found.previousLogs });
  return text ? text.trimEnd().split('\n').slice(-20) : [];
}

/**
 * Resolves when `name`'s rollout of `revisionId` is complete.
 * @throws DeployFailedError with Kubernetes' reason (and the container's last lines) when its pods cannot start.
 */
export async function waitForRollout(
  api: KubeApi,
  target: { namespace: string; name: string; deploymentId: string; revisionId: string; component: string },
  timings: RolloutWaitTimings,
  progress: RolloutProgress,
): Promise<void> {
  const { namespace, name } = target;
  const deployment = new DeploymentFollower(api, namespace, name);
  await deployment.watch();
  const podSelector = `${LABELS.deployment}=${target.deploymentId},${LABELS.revision}=${target.revisionId},${LABELS.component}=${target.component}`;
  const deadline = Date.now() + timings.timeoutMs;
  let lastLine = '';
  let nextLook = 0;
  try {
    for (;;) {
      if (progress.cancelled?.()) throw new RolloutCancelledError('The rollout was cancelled.');
      const now = Date.now();
      if (!deployment.latest || now >= nextLook) await deployment.refresh();
      const latest = deployment.latest;
      if (!latest) throw new DeployFailedError(`Deployment ${namespace}/${name} disappeared during the rollout.`);
      const state = rolloutState(latest);
      if (state.line !== lastLine) {
        progress.phase('rolling-out', `${name}: ${state.line}`);
        lastLine = state.line;
      }
      if (state.done) return;
      const stuck = deploymentProblem(latest);
      if (stuck) throw new DeployFailedError(stuck);
      if (now >= nextLook) {
        nextLook = now + timings.pollMs;
        await failIfPodsCannotStart(api, namespace, podSelector, timings);
        progress.phase('rolling-out');
      }
      if (Date.now() > deadline) {
        throw new DeployFailedError(
          `The rollout of ${name} did not finish within ${Math.round(timings.timeoutMs / 1000)} s: ${state.line}`,
        );
      }
      await deployment.changeOr(Math.max(10, nextLook - Date.now()));
    }
  } finally {
    deployment.close();
  }
}

/** @throws DeployFailedError with Kubernetes' reason and the container's last lines when a pod cannot start. */
async function failIfPodsCannotStart(
  api: KubeApi,
  namespace: string,
  podSelector: string,
  timings: RolloutWaitTimings,
): Promise<void> {
  const pods = await api.list('v1', 'Pod', namespace, { labelSelector: podSelector });
  const events = await api
    .list('v1', 'Event', namespace, { fieldSelector: 'involvedObject.kind=Pod,reason=Unhealthy' })
    .catch(() => []);
  const found = diagnosePods(pods, events, timings);
  if (!found) return;
  const lines = await lastLines(api, namespace, found);
  throw new DeployFailedError(lines.length > 0 ? `${found.message}. Last output:\n${lines.join('\n')}` : `${found.message}.`);
}

/** A Deployment's latest version, kept by a watch (opened again when it ends), with a wait that a change cuts short. */
class DeploymentFollower {
  latest: any = null;
  private wake: (() => void) | null = null;
  private stopWatch: (() => void) | null = null;

  constructor(
    private readonly api: KubeApi,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  async watch(): Promise<void> {
    this.stopWatch = await this.api
      .watch(
        collectionPath('apps/v1', 'Deployment', this.namespace),
        { fieldSelector: `metadata.name=${this.name}`, allowWatchBookmarks: false },
        (_type, object) => {
          this.latest = object;
          this.wake?.();
          this.wake = null;
        },
        () => {
          this.stopWatch = null;
        },
      )
      .catch(() => null);
  }

  /** Reads the Deployment (the watch may have missed a change while it was down) and reopens a watch that ended. */
  async refresh(): Promise<void> {
    this.latest = (await this.api.get('apps/v1', 'Deployment', this.namespace, this.name)) ?? this.latest;
    if (!this.stopWatch) await this.watch();
  }

  async changeOr(ms: number): Promise<void> {
    await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), delay(ms)]);
    this.wake = null;
  }

  close(): void {
    this.stopWatch?.();
  }
}
