/**
 * `resource_spec` (SPEC §2.2.1) as every part reads it: its type, which fields each runner gives an effect, and the
 * fields that would hand a tenant privileges on a cluster (CONTRACT §9: refused with a 422 at create and PATCH,
 * whatever the runner, so a deployment that moves to Kubernetes cannot carry one there). Pure: no I/O.
 */

/** A container of `init_containers` or `sidecars`: Kubernetes' Container, the fields SPEC names. */
export interface SpecContainer {
  name: string;
  image?: string | null;
  imagePullPolicy?: string;
  workingDir?: string;
  restartPolicy?: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: Record<string, unknown> }>;
  envFrom?: Array<Record<string, unknown>>;
  resources?: { limits?: Record<string, unknown>; requests?: Record<string, unknown> };
  volumeMounts?: SpecVolumeMount[];
  securityContext?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface SpecVolumeMount {
  name: string;
  mountPath?: string;
  subPath?: string;
  mountPropagation?: string;
  readOnly?: boolean;
  subPathExpr?: string;
}

export interface ResourceSpec {
  min_scale?: number | null;
  max_scale?: number | null;
  cpu?: number | null;
  cpu_limit?: number | null;
  memory_mb?: number | null;
  memory_limit_mb?: number | null;
  queue_min_scale?: number | null;
  queue_max_scale?: number | null;
  queue_cpu?: number | null;
  queue_cpu_limit?: number | null;
  queue_memory_mb?: number | null;
  queue_memory_limit_mb?: number | null;
  orchestrator_cpu?: number | null;
  orchestrator_cpu_limit?: number | null;
  orchestrator_memory_mb?: number | null;
  orchestrator_memory_limit_mb?: number | null;
  orchestrator_min_scale?: number | null;
  orchestrator_max_scale?: number | null;
  executor_cpu?: number | null;
  executor_cpu_limit?: number | null;
  executor_memory_mb?: number | null;
  executor_memory_limit_mb?: number | null;
  redis_memory_mb?: number | null;
  db_cpu?: number | null;
  db_cpu_limit?: number | null;
  db_memory_mb?: number | null;
  db_memory_limit_mb?: number | null;
  db_storage_gi?: number | null;
  db_max_connections?: number | null;
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  service_account_name?: string | null;
  image_pull_secrets?: Array<{ name: string }> | null;
  volumes?: Array<{ name: string; [source: string]: unknown }> | null;
  volume_mounts?: SpecVolumeMount[] | null;
  init_containers?: SpecContainer[] | null;
  sidecars?: SpecContainer[] | null;
}

export type ResourceField = keyof ResourceSpec;

export type Runner = 'process' | 'container' | 'kubernetes';

/** How a runner gives a field its effect, when it needs saying (the warning or the docs show it). */
const PROCESS_HONOURS: Partial<Record<ResourceField, string>> = { min_scale: 'instances behind the gateway' };
const CONTAINER_HONOURS: Partial<Record<ResourceField, string>> = {
  min_scale: 'containers behind the gateway',
  cpu: 'CPU shares',
  cpu_limit: 'CPU quota',
  memory_mb: 'memory reservation',
  memory_limit_mb: 'memory limit',
  image_pull_secrets: 'credentials for image_uri',
};

const QUEUE_FIELDS: ResourceField[] = [
  'queue_min_scale',
  'queue_max_scale',
  'queue_cpu',
  'queue_cpu_limit',
  'queue_memory_mb',
  'queue_memory_limit_mb',
];
const DATABASE_FIELDS: ResourceField[] = [
  'db_cpu',
  'db_cpu_limit',
  'db_memory_mb',
  'db_memory_limit_mb',
  'db_storage_gi',
  'db_max_connections',
];
const KUBERNETES_ALWAYS: ResourceField[] = [
  'min_scale',
  'max_scale',
  'cpu',
  'cpu_limit',
  'memory_mb',
  'memory_limit_mb',
  'labels',
  'annotations',
  'service_account_name',
  'image_pull_secrets',
  'volumes',
  'volume_mounts',
  'init_containers',
  'sidecars',
];

export interface KubernetesCapabilities {
  /** The deployment database is a StatefulSet sized by `db_*` (else the shared server: only its connection limit). */
  inClusterDatabase: boolean;
  /** The agent server can run its background-run workers apart from its HTTP side (a queue Deployment). */
  queueRole: boolean;
}

/** A field that is set but has no effect where the revision runs, with the reason a user reads. */
export interface IneffectiveField {
  field: ResourceField;
  reason: string;
}

function isSet(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/**
 * The fields of `spec` that are set and that `runner` gives no effect: warnings on the process and container
 * runners, 422s on Kubernetes (where every field must act). `memory_limit_mb` on the process runner caps only the V8
 * heap, which is named too.
 */
export function ineffectiveFields(
  spec: ResourceSpec | null | undefined,
  runner: Runner,
  kube: KubernetesCapabilities = { inClusterDatabase: false, queueRole: false },
): IneffectiveField[] {
  const found: IneffectiveField[] = [];
  for (const [key, value] of Object.entries(spec ?? {})) {
    const field = key as ResourceField;
    if (!isSet(value)) continue;
    const reason = reasonWithoutEffect(field, runner, kube);
    if (reason) found.push({ field, reason });
  }
  return found;
}

function reasonWithoutEffect(field: ResourceField, runner: Runner, kube: KubernetesCapabilities): string | null {
  if (runner === 'kubernetes') {
    if (KUBERNETES_ALWAYS.includes(field)) return null;
    if (QUEUE_FIELDS.includes(field)) {
      return kube.queueRole ? null : 'the agent server does not run its background-run workers apart from its HTTP side yet';
    }
    if (DATABASE_FIELDS.includes(field)) {
      return kube.inClusterDatabase
        ? null
        : 'the deployment database is on the shared server (GRAPHX_KUBE_DATABASE=in-cluster sizes one)';
    }
    if (field.startsWith('orchestrator_') || field.startsWith('executor_'))
      return 'graphx runs no separate orchestrator or executor';
    if (field === 'redis_memory_mb') return 'graphx runs no Redis (its queue is in the deployment database)';
    return 'unknown field';
  }
  if (runner === 'process' && field === 'memory_limit_mb') return null; // V8 heap cap; stated in the docs.
  const honoured = runner === 'process' ? PROCESS_HONOURS : CONTAINER_HONOURS;
  if (honoured[field]) return null;
  return `the ${runner} runner has no effect for it (it acts on Kubernetes)`;
}

/** A field asking for privileges on a cluster: where (path under resource_spec) and why. */
export interface PrivilegeViolation {
  path: Array<string | number>;
  message: string;
}

/** The volume sources SPEC names; any other (hostPath, gitRepo, iscsi, …) would reach the node or outside. */
export const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'secret',
  'emptyDir',
  'persistentVolumeClaim',
  'nfs',
  'projected',
  'downwardAPI',
  'csi',
] as const;

/** Container fields accepted in init_containers and sidecars: SPEC's, plus ports and probes (no host port). */
const CONTAINER_FIELDS = new Set([
  'name',
  'image',
  'imagePullPolicy',
  'workingDir',
  'restartPolicy',
  'command',
  'args',
  'env',
  'envFrom',
  'resources',
  'volumeMounts',
  'securityContext',
  'ports',
  'readinessProbe',
  'livenessProbe',
  'startupProbe',
]);

/** Where every pod keeps its service-account token: a tenant mount there would swap it for another. */
const TOKEN_DIR = '/var/run/secrets/kubernetes.io';

/**
 * The fields of `spec` that ask for privileges: privileged or escalating containers, added capabilities, root,
 * host paths, host ports, host namespaces, bidirectional mount propagation, and references to another namespace's
 * objects (a secret or service-account token named `<namespace>/<name>` or with a `namespace` key, a service account
 * of another namespace, graphx's own service account).
 */
export function privilegeViolations(
  spec: ResourceSpec | null | undefined,
  options: { selfServiceAccount?: string } = {},
): PrivilegeViolation[] {
  const found: PrivilegeViolation[] = [];
  if (!spec) return found;
  const account = spec.service_account_name;
  if (typeof account === 'string') {
    if (/[/:]/.test(account)) {
      found.push({ path: ['service_account_name'], message: "names another namespace's service account" });
    } else if (account === (options.selfServiceAccount ?? 'graphx')) {
      found.push({ path: ['service_account_name'], message: "is graphx's own service account" });
    }
  }
  (spec.volumes ?? []).forEach((volume, index) => {
    for (const key of Object.keys(volume ?? {})) {
      if (key === 'name') continue;
      if (!(ALLOWED_VOLUME_SOURCES as readonly string[]).includes(key)) {
        found.push({
          path: ['volumes', index, key],
          message:
            key === 'hostPath'
              ? "mounts a path of the node (hostPath): refused, it reaches the node and other tenants' pods"
              : `is not a volume source graphx accepts (one of ${ALLOWED_VOLUME_SOURCES.join(', ')})`,
        });
      }
    }
    crossNamespaceReferences(volume, ['volumes', index], found);
  });
  (spec.volume_mounts ?? []).forEach((mount, index) => checkMount(mount, ['volume_mounts', index], found));
  for (const list of ['init_containers', 'sidecars'] as const) {
    (spec[list] ?? []).forEach((container, index) => checkContainer(container, [list, index], found));
  }
  return found;
}

function checkMount(mount: SpecVolumeMount, path: Array<string | number>, found: PrivilegeViolation[]): void {
  if (mount?.mountPropagation === 'Bidirectional') {
    found.push({ path: [...path, 'mountPropagation'], message: 'Bidirectional propagation needs a privileged container' });
  }
  if (typeof mount?.mountPath === 'string' && normalise(mount.mountPath).startsWith(TOKEN_DIR)) {
    found.push({ path: [...path, 'mountPath'], message: `replaces the pod's service-account token (${TOKEN_DIR})` });
  }
}

function checkContainer(container: SpecContainer, path: Array<string | number>, found: PrivilegeViolation[]): void {
  for (const key of Object.keys(container ?? {})) {
    if (!CONTAINER_FIELDS.has(key)) found.push({ path: [...path, key], message: 'is not a container field graphx accepts' });
  }
  const context = (container?.securityContext ?? {}) as Record<string, any>;
  const at = (key: string) => [...path, 'securityContext', key];
  if (context.privileged === true) found.push({ path: at('privileged'), message: 'asks for a privileged container' });
  if (context.allowPrivilegeEscalation === true) {
    found.push({ path: at('allowPrivilegeEscalation'), message: 'lets the container gain privileges' });
  }
  if (Array.isArray(context.capabilities?.add) && context.capabilities.add.length > 0) {
    found.push({ path: [...at('capabilities'), 'add'], message: 'adds Linux capabilities' });
  }
  if (context.runAsUser === 0) found.push({ path: at('runAsUser'), message: 'runs as root' });
  if (context.runAsNonRoot === false) found.push({ path: at('runAsNonRoot'), message: 'allows running as root' });
  if (context.procMount && context.procMount !== 'Default') found.push({ path: at('procMount'), message: 'unmasks /proc' });
  if (context.seLinuxOptions) found.push({ path: at('seLinuxOptions'), message: 'sets SELinux labels' });
  if (context.windowsOptions?.hostProcess === true) found.push({ path: at('windowsOptions'), message: 'runs on the host' });
  for (const key of ['seccompProfile', 'appArmorProfile']) {
    if (context[key]?.type === 'Unconfined') found.push({ path: at(key), message: 'turns the profile off (Unconfined)' });
  }
  (Array.isArray(container?.ports) ? container.ports : []).forEach((port: Record<string, unknown>, index: number) => {
    if (port?.hostPort !== undefined || port?.hostIP !== undefined) {
      found.push({ path: [...path, 'ports', index], message: "binds a port of the node's network (hostPort)" });
    }
  });
  (container?.volumeMounts ?? []).forEach((mount, index) => checkMount(mount, [...path, 'volumeMounts', index], found));
  crossNamespaceReferences(container, path, found);
}

/** Any `namespace` key, or a secret/config map/service account named `<namespace>/<name>`, inside `value`. */
function crossNamespaceReferences(value: unknown, path: Array<string | number>, found: PrivilegeViolation[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => crossNamespaceReferences(item, [...path, index], found));
    return;
  }
  if (!value || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'namespace') {
      found.push({ path: [...path, key], message: "refers to another namespace's objects" });
    } else if (['secretName', 'serviceAccountName'].includes(key) && typeof inner === 'string' && /[/:]/.test(inner)) {
      found.push({ path: [...path, key], message: "names another namespace's secret or service account" });
    } else if (key === 'serviceAccountToken') {
      found.push({
        path: [...path, key],
        message: "projects a service-account token (only the pod's own is mounted, with service_account_name)",
      });
    } else {
      crossNamespaceReferences(inner, [...path, key], found);
    }
  }
}

function normalise(mountPath: string): string {
  return ('/' + mountPath.split('/').filter(Boolean).join('/')).replace(/\/$/, '') || '/';
}
