/**
 * Simulated pod status for the test API server, where no kubelet runs: the test writes what a kubelet would (the
 * pods' status subresource, and `Unhealthy` events for failed probes). Everything else is the real control plane:
 * the Deployment and ReplicaSet controllers made these pods and read this status. Tests using it say
 * "(simulated pod status)" in their names.
 */
import crypto from 'node:crypto';
import type { KubeApi } from '../../src/targets/kubernetes/kubeApi';

export type SimulatedState = 'ready' | 'image-pull-failure' | 'crash-loop' | 'unschedulable' | 'failed-probe';

const SIMULATED_MANAGER = 'simulated-kubelet';

/** Pods matching `labelSelector` (not being deleted), once at least `count` exist. */
export async function waitForPods(api: KubeApi, namespace: string, labelSelector: string, count = 1, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pods = (await api.list('v1', 'Pod', namespace, { labelSelector })).filter((pod) => !pod.metadata.deletionTimestamp);
    if (pods.length >= count) return pods as any[];
    if (Date.now() > deadline) throw new Error(`${count} pods matching ${labelSelector} did not appear (saw ${pods.length})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function containerStatus(container: any, state: SimulatedState, startedAt: string) {
  const base = { name: container.name, image: container.image, imageID: '', started: false, ready: false, restartCount: 0 };
  switch (state) {
    case 'ready':
      return { ...base, started: true, ready: true, state: { running: { startedAt } } };
    case 'image-pull-failure':
      return {
        ...base,
        state: {
          waiting: {
            reason: 'ImagePullBackOff',
            message: `Back-off pulling image "${container.image}": ErrImagePull: manifest unknown`,
          },
        },
      };
    case 'crash-loop':
      return {
        ...base,
        restartCount: 4,
        state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
        lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt, finishedAt: startedAt } },
      };
    case 'failed-probe':
      return { ...base, started: true, restartCount: 1, state: { running: { startedAt } } };
    default:
      return base;
  }
}

/** Writes `state` into the status of each pod, as a kubelet would. */
export async function simulatePods(api: KubeApi, pods: any[], state: SimulatedState): Promise<void> {
  const now = new Date().toISOString();
  for (const pod of pods) {
    const ready = state === 'ready' ? 'True' : 'False';
    const scheduled = state === 'unschedulable' ? 'False' : 'True';
    const status: Record<string, unknown> = {
      phase: state === 'ready' || state === 'crash-loop' || state === 'failed-probe' ? 'Running' : 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: scheduled,
          lastTransitionTime: now,
          ...(state === 'unschedulable'
            ? { reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.' }
            : {}),
        },
        { type: 'Initialized', status: scheduled, lastTransitionTime: now },
        { type: 'ContainersReady', status: ready, lastTransitionTime: now },
        { type: 'Ready', status: ready, lastTransitionTime: now },
      ],
    };
    if (state !== 'unschedulable') {
      status.startTime = now;
      status.podIP = `10.244.0.${crypto.randomInt(2, 250)}`;
      status.containerStatuses = (pod.spec.containers as any[]).map((container) => containerStatus(container, state, now));
    }
    await api.request('PATCH', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, {
      query: { fieldManager: SIMULATED_MANAGER },
      body: { status },
      contentType: 'application/merge-patch+json',
    });
    if (state === 'failed-probe') {
      await api.request('POST', `/api/v1/namespaces/${pod.metadata.namespace}/events`, {
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `${pod.metadata.name}.${crypto.randomBytes(4).toString('hex')}` },
          involvedObject: { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
          reason: 'Unhealthy',
          type: 'Warning',
          message: 'Startup probe failed: HTTP probe failed with statuscode: 503',
          source: { component: 'kubelet' },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    }
  }
}

/** Marks every pod matching `labelSelector` ready as it appears, until the returned function is called. */
export function keepPodsReady(api: KubeApi, namespace: string, labelSelector: string): () => Promise<void> {
  let running = true;
  const done = new Set<string>();
  const loop = (async () => {
    while (running) {
      const pods = (await api.list('v1', 'Pod', namespace, { labelSelector }).catch(() => [])) as any[];
      const fresh = pods.filter((pod) => !pod.metadata.deletionTimestamp && !done.has(pod.metadata.uid));
      if (fresh.length > 0) {
        await simulatePods(api, fresh, 'ready').catch(() => {});
        for (const pod of fresh) done.add(pod.metadata.uid);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}
