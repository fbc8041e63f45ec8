/**
 * Settings of the Kubernetes target (GRAPHX_KUBE_*), read and validated once, like src/config: a bad value stops
 * start-up with a message naming the variable. Kept beside the target so the target is one folder; the composition
 * root reads them when `GRAPHX_RUNNER=kubernetes`.
 */
import Joi from 'joi';
import { ConfigError } from '@graphx/kit/errors';

export type RouteKind = 'ingress' | 'httproute' | 'none';

/** Pods a NetworkPolicy names: a namespace (by its `kubernetes.io/metadata.name`) and pod labels. */
export interface PeerPods {
  namespace: string;
  podLabels: Record<string, string>;
  port: number;
}

export interface KubeSettings {
  /** Where deployments without `listener_config.k8s_namespace` go (GRAPHX_KUBE_NAMESPACE). */
  defaultNamespace: string;
  /** Every namespace graphx may act in (GRAPHX_KUBE_NAMESPACES, comma list; the default namespace is always one). */
  managedNamespaces: string[];
  /** kubeconfig context (GRAPHX_KUBE_CONTEXT); null: the current one, or in-cluster credentials. */
  context: string | null;
  /**
   * The kubeconfig file(s) (KUBECONFIG, a path list as kubectl reads it); null: ~/.kube/config, else the pod's
   * service account (in-cluster credentials).
   */
  kubeconfig: string | null;
  route: {
    kind: RouteKind;
    /** Host of a deployment without custom_url: `<route key>.<baseDomain>` (GRAPHX_KUBE_BASE_DOMAIN). */
    baseDomain: string;
    /** Scheme of deployment URLs (GRAPHX_KUBE_URL_SCHEME). */
    scheme: 'http' | 'https';
    /** GRAPHX_KUBE_INGRESS_CLASS. */
    ingressClassName: string | null;
    /** TLS Secret of the Ingress (GRAPHX_KUBE_TLS_SECRET), e.g. a wildcard certificate of the base domain. */
    tlsSecretName: string | null;
    /** Parent Gateway of HTTPRoutes (GRAPHX_KUBE_GATEWAY=`<namespace>/<name>`). */
    gateway: { namespace: string; name: string } | null;
    /** Namespace of the ingress controller or gateway pods: the only ingress the app pods admit. */
    fromNamespace: string;
  };
  /** The control plane's internal API as pods reach it: URL, and its pods for the NetworkPolicy. */
  controlPlane: { url: string } & PeerPods;
  database: {
    /** `shared`: a database and role per deployment on the configured PostgreSQL; `in-cluster`: a StatefulSet each. */
    mode: 'shared' | 'in-cluster';
    /** Host and port pods dial for the shared server (GRAPHX_KUBE_DATABASE_HOST, _PORT). */
    host: string;
    port: number;
    /** The shared server's addresses for the NetworkPolicy (GRAPHX_KUBE_DATABASE_CIDR). */
    cidr: string;
    /** Image of in-cluster databases (GRAPHX_KUBE_POSTGRES_IMAGE) and their storage class (GRAPHX_KUBE_STORAGE_CLASS). */
    image: string;
    storageClassName: string | null;
  };
  /** Whether app pods may reach public addresses (model APIs); private ranges stay closed either way. */
  publicEgress: boolean;
  /** Ranges closed to app pods except the rules above (GRAPHX_KUBE_PRIVATE_CIDRS). */
  privateCidrs: string[];
  registry: {
    /** Repository revision images are pushed to, `host[:port]/path` (GRAPHX_KUBE_REGISTRY). */
    repository: string | null;
    /** containers-auth.json with push credentials (GRAPHX_KUBE_REGISTRY_AUTH_FILE). */
    authFile: string | null;
    /** Whether the registry's TLS certificate is verified (GRAPHX_KUBE_REGISTRY_TLS_VERIFY). */
    tlsVerify: boolean;
    /** A Secret in each managed namespace the kubelet pulls with (GRAPHX_KUBE_PULL_SECRET). */
    pullSecret: string | null;
  };
  /** graphx's own service account: a deployment may not run as it (GRAPHX_KUBE_SELF_SERVICE_ACCOUNT). */
  selfServiceAccount: string;
  /** How long a rollout may take before DEPLOY_FAILED (GRAPHX_KUBE_ROLLOUT_TIMEOUT_SECONDS). */
  rolloutTimeoutSeconds: number;
}

const dnsLabel = Joi.string().pattern(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a DNS label');

const schema = Joi.object({
  GRAPHX_KUBE_NAMESPACE: dnsLabel.max(63).default('graphx-apps'),
  GRAPHX_KUBE_NAMESPACES: Joi.string().empty('').default(''),
  GRAPHX_KUBE_CONTEXT: Joi.string().empty(''),
  KUBECONFIG: Joi.string().empty(''),
  GRAPHX_KUBE_ROUTE: Joi.string().valid('ingress', 'httproute', 'none').default('ingress'),
  GRAPHX_KUBE_BASE_DOMAIN: Joi.string().hostname().default('apps.graphx.local'),
  GRAPHX_KUBE_URL_SCHEME: Joi.string().valid('http', 'https').default('https'),
  GRAPHX_KUBE_INGRESS_CLASS: Joi.string().empty(''),
  GRAPHX_KUBE_TLS_SECRET: Joi.string().empty(''),
  GRAPHX_KUBE_GATEWAY: Joi.string()
    .pattern(/^[a-z0-9-]+\/[a-z0-9.-]+$/, '<namespace>/<name>')
    .empty(''),
  GRAPHX_KUBE_INGRESS_NAMESPACE: dnsLabel.default('ingress-nginx'),
  GRAPHX_KUBE_CONTROL_PLANE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('http://graphx-api.graphx.svc:8080'),
  GRAPHX_KUBE_CONTROL_PLANE_NAMESPACE: dnsLabel.default('graphx'),
  GRAPHX_KUBE_CONTROL_PLANE_POD_LABELS: Joi.string().default('app.kubernetes.io/name=graphx,app.kubernetes.io/component=api'),
  GRAPHX_KUBE_DATABASE: Joi.string().valid('shared', 'in-cluster').default('shared'),
  GRAPHX_KUBE_DATABASE_HOST: Joi.string().empty(''),
  GRAPHX_KUBE_DATABASE_PORT: Joi.number().integer().min(1).max(65535).default(5432),
  GRAPHX_KUBE_DATABASE_CIDR: Joi.string().empty(''),
  GRAPHX_KUBE_POSTGRES_IMAGE: Joi.string().default('docker.io/library/postgres:17'),
  GRAPHX_KUBE_STORAGE_CLASS: Joi.string().empty(''),
  GRAPHX_KUBE_PUBLIC_EGRESS: Joi.boolean().truthy('1', 'yes').falsy('0', 'no').default(true),
  GRAPHX_KUBE_PRIVATE_CIDRS: Joi.string().default('10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,169.254.0.0/16'),
  GRAPHX_KUBE_REGISTRY: Joi.string().empty(''),
  GRAPHX_KUBE_REGISTRY_AUTH_FILE: Joi.string().empty(''),
  GRAPHX_KUBE_REGISTRY_TLS_VERIFY: Joi.boolean().truthy('1', 'yes').falsy('0', 'no').default(true),
  GRAPHX_KUBE_PULL_SECRET: Joi.string().empty(''),
  GRAPHX_KUBE_SELF_SERVICE_ACCOUNT: Joi.string().default('graphx'),
  GRAPHX_KUBE_ROLLOUT_TIMEOUT_SECONDS: Joi.number().integer().min(10).max(7200).default(600),
}).unknown(true);

/** Every variable read here (a stack's worker process is given them with the rest of its configuration). */
export function kubeVariables(): string[] {
  return Object.keys((schema.describe() as { keys: Record<string, unknown> }).keys).sort();
}

/**
 * The target's settings from the environment. `databaseUrl` is the control plane's own PostgreSQL: its host is what
 * pods dial unless GRAPHX_KUBE_DATABASE_HOST says otherwise (a control plane outside the cluster sees it elsewhere).
 * @throws ConfigError naming the variable.
 */
export function loadKubeSettings(env: NodeJS.ProcessEnv, databaseUrl: string | null = null): KubeSettings {
  const { value: v, error } = schema.validate(env, { convert: true, abortEarly: true });
  if (error) throw new ConfigError(`Invalid Kubernetes setting: ${error.message}`);
  const list = (text: string) =>
    text
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const managed = [...new Set([v.GRAPHX_KUBE_NAMESPACE, ...list(v.GRAPHX_KUBE_NAMESPACES)])];
  for (const namespace of managed) {
    if (dnsLabel.validate(namespace).error)
      throw new ConfigError(`GRAPHX_KUBE_NAMESPACES: '${namespace}' is not a namespace name`);
  }
  if (v.GRAPHX_KUBE_ROUTE === 'httproute' && !v.GRAPHX_KUBE_GATEWAY) {
    throw new ConfigError('GRAPHX_KUBE_GATEWAY (<namespace>/<name>) is required with GRAPHX_KUBE_ROUTE=httproute');
  }
  const dbUrl = databaseUrl ? new URL(databaseUrl) : null;
  const dbHost = v.GRAPHX_KUBE_DATABASE_HOST ?? dbUrl?.hostname ?? '127.0.0.1';
  const controlPlaneUrl = new URL(v.GRAPHX_KUBE_CONTROL_PLANE_URL);
  const [gatewayNamespace, gatewayName] = (v.GRAPHX_KUBE_GATEWAY ?? '').split('/');
  return {
    defaultNamespace: v.GRAPHX_KUBE_NAMESPACE,
    managedNamespaces: managed,
    context: v.GRAPHX_KUBE_CONTEXT ?? null,
    kubeconfig: v.KUBECONFIG ?? null,
    route: {
      kind: v.GRAPHX_KUBE_ROUTE,
      baseDomain: v.GRAPHX_KUBE_BASE_DOMAIN,
      scheme: v.GRAPHX_KUBE_URL_SCHEME,
      ingressClassName: v.GRAPHX_KUBE_INGRESS_CLASS ?? null,
      tlsSecretName: v.GRAPHX_KUBE_TLS_SECRET ?? null,
      gateway: gatewayName ? { namespace: gatewayNamespace as string, name: gatewayName } : null,
      fromNamespace: v.GRAPHX_KUBE_INGRESS_NAMESPACE,
    },
    controlPlane: {
      url: controlPlaneUrl.toString().replace(/\/+$/, ''),
      namespace: v.GRAPHX_KUBE_CONTROL_PLANE_NAMESPACE,
      podLabels: parseLabels(v.GRAPHX_KUBE_CONTROL_PLANE_POD_LABELS, 'GRAPHX_KUBE_CONTROL_PLANE_POD_LABELS'),
      port: Number(controlPlaneUrl.port || (controlPlaneUrl.protocol === 'https:' ? 443 : 80)),
    },
    database: {
      mode: v.GRAPHX_KUBE_DATABASE,
      host: dbHost,
      port: v.GRAPHX_KUBE_DATABASE_PORT,
      cidr: v.GRAPHX_KUBE_DATABASE_CIDR ?? (/^\d+\.\d+\.\d+\.\d+$/.test(dbHost) ? `${dbHost}/32` : '0.0.0.0/32'),
      image: v.GRAPHX_KUBE_POSTGRES_IMAGE,
      storageClassName: v.GRAPHX_KUBE_STORAGE_CLASS ?? null,
    },
    publicEgress: v.GRAPHX_KUBE_PUBLIC_EGRESS,
    privateCidrs: list(v.GRAPHX_KUBE_PRIVATE_CIDRS),
    registry: {
      repository: v.GRAPHX_KUBE_REGISTRY ?? null,
      authFile: v.GRAPHX_KUBE_REGISTRY_AUTH_FILE ?? null,
      tlsVerify: v.GRAPHX_KUBE_REGISTRY_TLS_VERIFY,
      pullSecret: v.GRAPHX_KUBE_PULL_SECRET ?? null,
    },
    selfServiceAccount: v.GRAPHX_KUBE_SELF_SERVICE_ACCOUNT,
    rolloutTimeoutSeconds: v.GRAPHX_KUBE_ROLLOUT_TIMEOUT_SECONDS,
  };
}

/** `k=v,k=v` → object. */
function parseLabels(text: string, variable: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const [key, value] = pair.split('=');
    if (!key || value === undefined) throw new ConfigError(`${variable}: '${pair}' is not key=value`);
    labels[key.trim()] = value.trim();
  }
  return labels;
}
