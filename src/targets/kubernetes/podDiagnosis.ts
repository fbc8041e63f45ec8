/**
 * Why a revision's pods cannot start, in Kubernetes' own words: an image that cannot be pulled, a crash loop, a pod
 * no node can take, failed probes, a container the kubelet cannot create, a ReplicaSet that cannot create pods. Pure
 * functions over the pods, events and Deployment as the API server returns them, so tests can feed them directly.
 */

export interface PodProblem {
  pod: string;
  container: string | null;
  /** Kubernetes' reason (ImagePullBackOff, CrashLoopBackOff, Unschedulable, Unhealthy, …). */
  reason: string;
  /** The sentence the user reads. */
  message: string;
  /** True when last log lines of the container's previous run help (it ran and died). */
  previousLogs: boolean;
}

const IMAGE_PULL = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);
const CANNOT_CREATE = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

export interface DiagnosisTimings {
  /** A pod no node takes for this long fails the rollout (a cluster autoscaler may still be adding a node before). */
  unschedulableAfterMs: number;
  /** A running pod whose readiness probe keeps failing this long fails the rollout. */
  notReadyAfterMs: number;
}

function since(timestamp: string | undefined, now: number): number {
  const at = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(at) ? 0 : now - at;
}

/**
 * The first problem among `pods` that will not heal by waiting. `probeEvents` are the namespace's `Unhealthy`
 * events (the kubelet reports failed probes only as events).
 */
export function diagnosePods(
  pods: any[],
  probeEvents: any[],
  timings: DiagnosisTimings,
  now: number = Date.now(),
): PodProblem | null {
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const name: string = pod.metadata?.name ?? '?';
    const conditions: any[] = pod.status?.conditions ?? [];
    const scheduled = conditions.find((condition) => condition.type === 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
      if (since(scheduled.lastTransitionTime ?? pod.metadata?.creationTimestamp, now) >= timings.unschedulableAfterMs) {
        return problem(name, null, 'Unschedulable', `Pod ${name} cannot be scheduled: ${scheduled.message ?? 'no node fits it'}`);
      }
    }
    const statuses: any[] = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    for (const status of statuses) {
      const found = containerProblem(name, status, probeEvents, timings, now);
      if (found) return found;
    }
  }
  return null;
}

/** A container's problem that will not heal by waiting: image pull, cannot create, crash loop, failed probes. */
function containerProblem(
  name: string,
  status: any,
  probeEvents: any[],
  timings: DiagnosisTimings,
  now: number,
): PodProblem | null {
  const waiting = status.state?.waiting;
  const reason: string | undefined = waiting?.reason;
  if (reason && IMAGE_PULL.has(reason)) {
    return problem(
      name,
      status.name,
      reason,
      `Image pull failed for container ${status.name} (${reason}): ${waiting.message ?? status.image}`,
    );
  }
  if (reason && CANNOT_CREATE.has(reason)) {
    return problem(
      name,
      status.name,
      reason,
      `Container ${status.name} cannot start (${reason}): ${waiting.message ?? ''}`.trim(),
    );
  }
  if (reason === 'CrashLoopBackOff') {
    const last = status.lastState?.terminated;
    const exit = last ? ` (last exit code ${last.exitCode}${last.reason ? `, ${last.reason}` : ''})` : '';
    const probe = latestProbeFailure(probeEvents, name, ['Liveness', 'Startup']);
    const why = probe ? `; ${probe}` : '';
    return {
      ...problem(
        name,
        status.name,
        'CrashLoopBackOff',
        `Container ${status.name} is crash-looping: restarted ${status.restartCount ?? 0} times${exit}${why}`,
      ),
      previousLogs: true,
    };
  }
  if ((status.restartCount ?? 0) > 0) {
    const probe = latestProbeFailure(probeEvents, name, ['Liveness', 'Startup']);
    if (probe)
      return {
        ...problem(name, status.name, 'Unhealthy', `Container ${status.name} was restarted: ${probe}`),
        previousLogs: true,
      };
  }
  if (status.state?.running && status.ready === false) {
    const probe = latestProbeFailure(probeEvents, name, ['Readiness']);
    if (probe && since(status.state.running.startedAt, now) >= timings.notReadyAfterMs) {
      return problem(name, status.name, 'Unhealthy', `Container ${status.name} never became ready: ${probe}`);
    }
  }
  return null;
}

function problem(pod: string, container: string | null, reason: string, message: string): PodProblem {
  return { pod, container, reason, message, previousLogs: false };
}

/** The newest `<Kind> probe failed: …` message the kubelet reported for `pod`. */
function latestProbeFailure(events: any[], pod: string, kinds: string[]): string | null {
  const matching = events
    .filter((event) => event.involvedObject?.name === pod && event.reason === 'Unhealthy')
    .filter((event) => kinds.some((kind) => String(event.message ?? '').startsWith(`${kind} probe failed`)))
    .sort((a, b) => eventTime(b) - eventTime(a));
  return matching[0]?.message ?? null;
}

function eventTime(event: any): number {
  return Date.parse(event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp ?? 0) || 0;
}

/** A Deployment that cannot create its pods (quota, a missing service account, admission) says so in a condition. */
export function deploymentProblem(deployment: any): string | null {
  const conditions: any[] = deployment?.status?.conditions ?? [];
  const failure = conditions.find((condition) => condition.type === 'ReplicaFailure' && condition.status === 'True');
  if (failure) return `Pods cannot be created (${failure.reason}): ${failure.message}`;
  const progressing = conditions.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return `The rollout made no progress: ${progressing.message}`;
  return null;
}

/** Where a Deployment's rollout stands, as `kubectl rollout status` reads it. */
export function rolloutState(deployment: any): { done: boolean; line: string } {
  const generation = deployment?.metadata?.generation ?? 0;
  const status = deployment?.status ?? {};
  const wanted = deployment?.spec?.replicas ?? 1;
  if ((status.observedGeneration ?? 0) < generation) return { done: false, line: 'Waiting for the Deployment controller.' };
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < wanted) return { done: false, line: `${updated} of ${wanted} new replicas updated.` };
  if (total > updated) return { done: false, line: `${total - updated} old replicas pending termination.` };
  if (available < updated) return { done: false, line: `${available} of ${updated} updated replicas available.` };
  return { done: true, line: `${available} of ${wanted} replicas available.` };
}
