/**
 * The agent server's Deployment (and the queue side's), and their HorizontalPodAutoscalers: replicas, requests and
 * limits from resource_spec; labels, annotations, service account, pull secrets, volumes, mounts, init containers
 * and sidecars passed through (the privilege policy has refused what must not pass); the revision's Secret as
 * environment; `/ok` probes; non-root, read-only root filesystem, no capabilities; a rolling update that keeps the
 * old revision serving until the new one is ready.
 */
import { RUNTIME_PORT, RUNTIME_UID } from '@graphx/contract/image';
import { INSTANCE_ENV, toInstanceEnv } from '@graphx/contract/instanceEnv';
import type { ResourceSpec, SpecContainer } from '../../../pipeline/resourceSpec';
import { semiSpaceMb } from '../../../pipeline/runtimeEnv';
import { baseName, IMAGE_ANNOTATION, objectLabels, podSelector, revisionSecretName, type Component } from '../names';
import { containerResources } from './quantities';
import type { KubeObject, ObjectSettings, RevisionObjectsInput } from './types';

export const APP_CONTAINER = 'agent-server';
/** Memory limit when resource_spec names none: the container runner's default too. */
export const DEFAULT_MEMORY_MB = 1024;
/** CPU request when an autoscaler needs one (utilisation is a share of the request) and resource_spec names none. */
export const DEFAULT_AUTOSCALED_CPU = 0.25;
export const TARGET_CPU_UTILISATION = 75;
/** The runtime drains streams for up to 30 s after SIGTERM (docs/internal-contracts.md). */
const TERMINATION_GRACE_SECONDS = 35;

/** The variables of the instance contract that are secret: they travel in the revision's Secret, not the pod spec. */
export const SECRET_INSTANCE_VARIABLES = [INSTANCE_ENV.databaseUri, INSTANCE_ENV.serviceToken] as const;

interface WorkloadSizing {
  minScale: number;
  maxScale: number | null;
  cpu: number | null;
  cpuLimit: number | null;
  memoryMb: number | null;
  memoryLimitMb: number | null;
}

/** The API side's sizing, or the queue side's from the `queue_*` fields. */
export function sizing(spec: ResourceSpec, component: 'api' | 'queue'): WorkloadSizing {
  if (component === 'queue') {
    return {
      minScale: spec.queue_min_scale ?? 1,
      maxScale: spec.queue_max_scale ?? null,
      cpu: spec.queue_cpu ?? null,
      cpuLimit: spec.queue_cpu_limit ?? null,
      memoryMb: spec.queue_memory_mb ?? null,
      memoryLimitMb: spec.queue_memory_limit_mb ?? null,
    };
  }
  return {
    minScale: spec.min_scale ?? 1,
    maxScale: spec.max_scale ?? null,
    cpu: spec.cpu ?? null,
    cpuLimit: spec.cpu_limit ?? null,
    memoryMb: spec.memory_mb ?? null,
    memoryLimitMb: spec.memory_limit_mb ?? null,
  };
}

/** True when the workload scales between min and max (an HPA owns its replicas). */
export function autoscaled(size: WorkloadSizing): boolean {
  return size.maxScale !== null && size.maxScale > size.minScale;
}

export function workloadName(input: Pick<RevisionObjectsInput, 'deploymentId' | 'deploymentName'>, component: Component) {
  const base = baseName(input);
  return component === 'api' ? base : `${base}-${component}`;
}

/** The app's environment outside its Secret: the instance contract's non-secret variables and the V8 flags. */
export function plainEnvironment(input: RevisionObjectsInput, size: WorkloadSizing, component: 'api' | 'queue') {
  const contract = toInstanceEnv({
    port: RUNTIME_PORT,
    host: '0.0.0.0',
    databaseUri: '',
    configPath: input.configPath,
    deploymentId: input.deploymentId,
    revisionId: input.revisionId,
    tenantId: input.tenantId,
    controlPlaneUrl: '',
    controlPlaneSocket: null,
    serviceToken: '',
  });
  const env: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(contract)) {
    if ((SECRET_INSTANCE_VARIABLES as readonly string[]).includes(name)) continue;
    if (name === INSTANCE_ENV.controlPlaneUrl) continue;
    env.push({ name, value });
  }
  // With a queue side the API side executes only the streamed runs it answers; without one it does everything.
  const role = component === 'queue' ? 'queue' : hasQueueSide(input.resourceSpec) ? 'api' : 'all';
  env.push({ name: 'GRAPHX_RUNTIME_ROLE', value: role });
  const memory = size.memoryLimitMb ?? size.memoryMb ?? DEFAULT_MEMORY_MB;
  const nodeOptions = input.builtImage ? [`--max-semi-space-size=${semiSpaceMb(memory)}`] : [];
  if (size.memoryLimitMb) nodeOptions.push(`--max-old-space-size=${Math.floor(size.memoryLimitMb)}`);
  if (nodeOptions.length > 0) env.push({ name: 'NODE_OPTIONS', value: nodeOptions.join(' ') });
  return env;
}

function appContainer(input: RevisionObjectsInput, size: WorkloadSizing, component: 'api' | 'queue', settings: ObjectSettings) {
  const probe = (periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path: '/ok', port: 'http' },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 2,
  });
  const cpu = size.cpu ?? (autoscaled(size) ? DEFAULT_AUTOSCALED_CPU : null);
  return {
    name: APP_CONTAINER,
    image: input.image,
    env: [...plainEnvironment(input, size, component), { name: INSTANCE_ENV.controlPlaneUrl, value: settings.controlPlane.url }],
    envFrom: [{ secretRef: { name: revisionSecretName(baseName(input), input.revisionId) } }],
    ports: [{ name: 'http', containerPort: RUNTIME_PORT, protocol: 'TCP' }],
    resources: containerResources({
      cpu,
      cpuLimit: size.cpuLimit,
      memoryMb: size.memoryMb ?? size.memoryLimitMb ?? DEFAULT_MEMORY_MB,
      memoryLimitMb: size.memoryLimitMb ?? size.memoryMb ?? DEFAULT_MEMORY_MB,
    }),
    // Up to two minutes to start (a cold Node with a large graph), then ready and alive on the runtime's own /ok.
    startupProbe: probe(2, 60),
    readinessProbe: probe(2, 2),
    livenessProbe: probe(10, 3),
    securityContext: hardenedContext(),
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }, ...(input.resourceSpec.volume_mounts ?? [])],
  };
}

function hardenedContext() {
  return {
    runAsNonRoot: true,
    runAsUser: RUNTIME_UID,
    runAsGroup: RUNTIME_UID,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  };
}

/** A tenant's container with graphx's defaults under what it says (the policy refused what would weaken them). */
function tenantContainer(container: SpecContainer): SpecContainer {
  const context = (container.securityContext ?? {}) as Record<string, unknown>;
  return {
    ...container,
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...context },
  };
}

/** The pod template of one side. Sidecars with `restartPolicy: Always` run as native sidecars (init containers). */
function podTemplate(input: RevisionObjectsInput, component: 'api' | 'queue', settings: ObjectSettings) {
  const spec = input.resourceSpec;
  const size = sizing(spec, component);
  const sidecars = (spec.sidecars ?? []).map(tenantContainer);
  const nativeSidecars = sidecars.filter((container) => container.restartPolicy === 'Always');
  const plainSidecars = sidecars.filter((container) => container.restartPolicy !== 'Always');
  const pullSecrets = [
    ...(settings.registry.pullSecret ? [{ name: settings.registry.pullSecret }] : []),
    ...(spec.image_pull_secrets ?? []).map((secret) => ({ name: secret.name })),
  ];
  const initContainers = [...(spec.init_containers ?? []).map(tenantContainer), ...nativeSidecars];
  return {
    metadata: {
      labels: { ...(spec.labels ?? {}), ...objectLabels(input, component) },
      annotations: { ...(spec.annotations ?? {}), [IMAGE_ANNOTATION]: input.image },
    },
    spec: {
      ...(spec.service_account_name ? { serviceAccountName: spec.service_account_name } : {}),
      // The app needs no Kubernetes API: a token only when the tenant named a service account of its own.
      automountServiceAccountToken: Boolean(spec.service_account_name),
      // Service links would put every Service of a shared namespace (other tenants') into the app's environment.
      enableServiceLinks: false,
      terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: RUNTIME_UID,
        runAsGroup: RUNTIME_UID,
        fsGroup: RUNTIME_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      ...(pullSecrets.length > 0 ? { imagePullSecrets: pullSecrets } : {}),
      ...(initContainers.length > 0 ? { initContainers } : {}),
      containers: [appContainer(input, size, component, settings), ...plainSidecars],
      volumes: [{ name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '128Mi' } }, ...(spec.volumes ?? [])],
    },
  };
}

/** The Deployment of one side. With an autoscaler `replicas` is left to it (see the target's replica handover). */
export function appDeployment(input: RevisionObjectsInput, component: 'api' | 'queue', settings: ObjectSettings): KubeObject {
  const size = sizing(input.resourceSpec, component);
  const spec = input.resourceSpec;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: workloadName(input, component),
      namespace: input.namespace,
      labels: { ...(spec.labels ?? {}), ...objectLabels(input, component) },
      annotations: { ...(spec.annotations ?? {}) },
    },
    spec: {
      ...(autoscaled(size) ? {} : { replicas: size.minScale }),
      selector: { matchLabels: podSelector(input.deploymentId, component) },
      revisionHistoryLimit: 5,
      progressDeadlineSeconds: settings.rolloutTimeoutSeconds,
      // Old pods serve until new ones are ready: none is taken away before its replacement is available.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      template: podTemplate(input, component, settings),
    },
  };
}

/** The HPA of one side, when max_scale (queue_max_scale) is above min_scale: CPU utilisation of the requests. */
export function autoscaler(input: RevisionObjectsInput, component: 'api' | 'queue'): KubeObject | null {
  const size = sizing(input.resourceSpec, component);
  if (!autoscaled(size)) return null;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: {
      name: workloadName(input, component),
      namespace: input.namespace,
      labels: { ...(input.resourceSpec.labels ?? {}), ...objectLabels(input, component) },
    },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: workloadName(input, component) },
      minReplicas: size.minScale,
      maxReplicas: size.maxScale,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: TARGET_CPU_UTILISATION } },
        },
      ],
    },
  };
}

/** True when the deployment runs its queue apart: any `queue_*` field is set. */
export function hasQueueSide(spec: ResourceSpec): boolean {
  return Object.entries(spec).some(([key, value]) => key.startsWith('queue_') && value !== null && value !== undefined);
}
