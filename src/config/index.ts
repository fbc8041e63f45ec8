/**
 * The one place that reads the environment. Values come from `config/default.json`, then an optional JSON file named
 * by GRAPHX_CONFIG_FILE, then the process environment (highest). Everything is validated with Joi once; a bad value
 * stops start-up with a message naming the variable and what it accepts.
 */
import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import { ConfigError } from '@graphx/kit/errors';
import { kubeVariables, loadKubeSettings, type KubeSettings } from '../targets/kubernetes/settings';

export type DeploymentMode = 'cloud' | 'self_hosted';

export interface GraphxConfig {
  /** Control-plane API port (PORT). */
  port: number;
  /** Interface the API and gateway bind to (GRAPHX_HOST). */
  host: string;
  /** Port of the gateway in front of deployed apps (GRAPHX_GATEWAY_PORT). */
  gatewayPort: number;
  /**
   * Public base URL of the gateway, an origin (GRAPHX_GATEWAY_PUBLIC_URL): deployment URLs are `<it>/<name>` and the
   * apps build their links on it. Null: the gateway's own `http://127.0.0.1:<port>`.
   */
  gatewayPublicUrl: string | null;
  /** The largest request body the gateway forwards to an app (GRAPHX_GATEWAY_MAX_BODY_BYTES); larger ones are a 413. */
  gatewayMaxBodyBytes: number;
  /** Absolute data directory (GRAPHX_DATA_DIR): embedded PostgreSQL, Temporal SQLite file, builds, keys. */
  dataDir: string;
  /** External PostgreSQL (DATABASE_URL); null means embedded PostgreSQL under the data dir. */
  databaseUrl: string | null;
  /** External Temporal frontend (TEMPORAL_ADDRESS); null means we start the dev server. */
  temporalAddress: string | null;
  temporalNamespace: string;
  /** Port of the dev server we start (GRAPHX_TEMPORAL_PORT) and of its Web UI (GRAPHX_TEMPORAL_UI_PORT). */
  temporalPort: number;
  temporalUiPort: number;
  /**
   * Web UI of an external Temporal (GRAPHX_TEMPORAL_UI_URL), linked from the console's deployment pages; with the dev
   * server graphx starts, its own UI is linked.
   */
  temporalUiUrl: string | null;
  /** Explicit path of the Temporal CLI binary (GRAPHX_TEMPORAL_CLI). */
  temporalCli: string | null;
  /** API key seeded on first start instead of a generated one (GRAPHX_BOOTSTRAP_API_KEY). */
  bootstrapApiKey: string | null;
  /** 32-byte key (hex or base64) for secrets at rest (GRAPHX_SECRET_KEY); null: generated once into the data dir. */
  secretKey: string | null;
  deploymentMode: DeploymentMode;
  /** Allow file:// and http://127.0.0.1 repositories (GRAPHX_ALLOW_FILE_REPOS=1). */
  allowFileRepos: boolean;
  /** Allow http://127.0.0.1 and http://localhost OAuth endpoints (GRAPHX_ALLOW_INSECURE_OAUTH=1). */
  allowInsecureOauth: boolean;
  /**
   * Whether OAuth token endpoints and repositories may be on private networks (10/8, 172.16/12, 192.168/16, fc00::/7,
   * 100.64/10), e.g. a code host on the company network (GRAPHX_ALLOW_PRIVATE_NETWORK; default on when
   * GRAPHX_DEPLOYMENT_MODE=self_hosted, off for cloud). Loopback and link-local are refused either way.
   */
  allowPrivateNetwork: boolean;
  unusedAfterDays: number;
  buildTimeoutSeconds: number;
  /** A build with no output and no CPU time used by its processes for this long is stopped (GRAPHX_BUILD_STALL_SECONDS). */
  buildStallSeconds: number;
  /** Memory limit of each step of an image build, swap included (GRAPHX_BUILD_MEMORY_MB). */
  buildMemoryMb: number;
  /** Hosts an image build's dependency install may reach over HTTPS (GRAPHX_BUILD_REGISTRY_HOSTS, comma list). */
  buildRegistryHosts: string[];
  /** The Python interpreters builds may make environments with (GRAPHX_PYTHON_INTERPRETERS); unset: those found. */
  pythonInterpreters?: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Task queues `graphx worker` polls (GRAPHX_WORKER_QUEUES, comma list of control and build). Empty: none, so
   * `graphx serve` runs the API alone (its workers run elsewhere, as deploy/kubernetes runs them).
   */
  workerQueues: Array<'control' | 'build'>;
  /**
   * Prefix of this installation's Temporal task queues (GRAPHX_TASK_QUEUE_PREFIX; `<prefix>-control`, `<prefix>-build`):
   * installations sharing a namespace take different prefixes so that no worker takes another's tasks.
   */
  taskQueuePrefix: string;
  /** Public base URL of the control plane, used in OAuth redirect URIs (GRAPHX_PUBLIC_URL). */
  publicUrl: string;
  /**
   * Where the stack's own processes reach the control-plane API: a worker's app instances of the process runner
   * (GRAPHX_INTERNAL_API_URL; default the public URL). `graphx start` gives its worker the API's loopback address.
   */
  internalApiUrl: string;
  /**
   * Where builds and apps run (GRAPHX_RUNNER, or GRAPHX_TARGET by the name): `container`, `process` (host
   * processes, not isolated), `kubernetes` (apps on a cluster, images built as for containers and pushed), or `auto`
   * (the default: containers when an engine answers, else processes; resolved at start by src/targets/choose.ts).
   */
  runner: 'process' | 'container' | 'kubernetes' | 'auto';
  /** The Kubernetes target's settings (GRAPHX_KUBE_*, KUBECONFIG) when the runner is `kubernetes`, else null. */
  kube: KubeSettings | null;
  /** Docker Engine API socket to use (GRAPHX_CONTAINER_SOCKET); null: graphx starts podman on its own socket. */
  containerSocket: string | null;
  /** Image and container store of the podman graphx starts (GRAPHX_CONTAINER_STORE; default `<dataDir>/containers/store`). */
  containerStoreDir: string;
  /** Base of the runtime image (GRAPHX_RUNTIME_BASE_IMAGE): a registry image, or `offline` to build it from Debian. */
  runtimeBaseImage: string;
  /** Port of the worker's /metrics, /ready and /ok (GRAPHX_WORKER_METRICS_PORT; 0: any free port). */
  workerMetricsPort: number;
  /** Whether the worker exports the Temporal SDK's own metrics through its /metrics (GRAPHX_TEMPORAL_SDK_METRICS). */
  temporalSdkMetrics: boolean;
  /** How every connection to an external Temporal is secured (client, worker, readiness); null: plaintext. */
  temporalTls: TemporalTlsSettings | null;
  /** Temporal Cloud API key (TEMPORAL_API_KEY); implies TLS. Never logged. */
  temporalApiKey: string | null;
  /**
   * The settings this configuration was read from (defaults, file, environment and overrides merged, by variable
   * name): what a child process of the stack (its worker) is given as GRAPHX_CONFIG_FILE so it reads the same.
   */
  settings: Readonly<Record<string, string>>;
}

/** TLS of the Temporal connection (TEMPORAL_TLS and TEMPORAL_TLS_*): files are read when a connection is made. */
export interface TemporalTlsSettings {
  /** PEM of the CA that signed the server's certificate (TEMPORAL_TLS_CA_FILE); null: the system's roots. */
  serverCaFile: string | null;
  /** PEM client certificate and key for mTLS (TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE); both or neither. */
  clientCertFile: string | null;
  clientKeyFile: string | null;
  /** Name expected in the server's certificate when it differs from the address host (TEMPORAL_TLS_SERVER_NAME). */
  serverName: string | null;
}

const flag = Joi.boolean().truthy('1', 'true', 'yes').falsy('0', 'false', 'no', '');

const schema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).required(),
  GRAPHX_HOST: Joi.string().hostname().required(),
  GRAPHX_GATEWAY_PORT: Joi.number().integer().min(0).max(65535).required(),
  GRAPHX_GATEWAY_PUBLIC_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .pattern(/^https?:\/\/[^/?#]+\/?$/, 'an origin (scheme, host and port; no path)')
    .empty(''),
  GRAPHX_GATEWAY_MAX_BODY_BYTES: Joi.number()
    .integer()
    .min(1024)
    .default(300 * 1024 * 1024),
  GRAPHX_DATA_DIR: Joi.string().min(1).required(),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .empty(''),
  TEMPORAL_ADDRESS: Joi.string()
    .pattern(/^[^:/\s]+:\d+$/, 'host:port')
    .empty(''),
  TEMPORAL_NAMESPACE: Joi.string().min(1).required(),
  GRAPHX_TEMPORAL_PORT: Joi.number().integer().min(0).max(65535).required(),
  GRAPHX_TEMPORAL_UI_PORT: Joi.number().integer().min(0).max(65535).required(),
  GRAPHX_TEMPORAL_CLI: Joi.string().empty(''),
  GRAPHX_TEMPORAL_UI_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .empty(''),
  GRAPHX_BOOTSTRAP_API_KEY: Joi.string().min(16).max(256).empty(''),
  GRAPHX_SECRET_KEY: Joi.string()
    .pattern(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, '64 hex digits or 32 bytes in base64')
    .empty(''),
  GRAPHX_DEPLOYMENT_MODE: Joi.string().valid('cloud', 'self_hosted').required(),
  GRAPHX_ALLOW_FILE_REPOS: flag.default(false),
  GRAPHX_ALLOW_INSECURE_OAUTH: flag.default(false),
  GRAPHX_ALLOW_PRIVATE_NETWORK: flag.when('GRAPHX_DEPLOYMENT_MODE', {
    is: 'self_hosted',
    then: flag.default(true),
    otherwise: flag.default(false),
  }),
  GRAPHX_UNUSED_AFTER_DAYS: Joi.number().integer().min(1).required(),
  GRAPHX_BUILD_TIMEOUT_SECONDS: Joi.number().integer().min(1).required(),
  GRAPHX_BUILD_STALL_SECONDS: Joi.number().integer().min(1).default(300),
  GRAPHX_BUILD_MEMORY_MB: Joi.number().integer().min(64).max(1_048_576).default(2048),
  GRAPHX_BUILD_REGISTRY_HOSTS: Joi.string()
    .pattern(/^\.?[a-z0-9.-]+(,\.?[a-z0-9.-]+)*$/i, 'comma list of host names (.example.com: its subdomains)')
    .default('registry.npmjs.org,registry.yarnpkg.com,repo.yarnpkg.com,pypi.org,files.pythonhosted.org'),
  GRAPHX_PYTHON_INTERPRETERS: Joi.string()
    .pattern(/^[^,\s]+(,[^,\s]+)*$/, 'comma list of Python interpreters')
    .empty(''),
  GRAPHX_LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').required(),
  GRAPHX_PUBLIC_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .empty(''),
  GRAPHX_INTERNAL_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .empty(''),
  GRAPHX_RUNNER: Joi.string().valid('container', 'process', 'kubernetes', 'auto').default('auto'),
  GRAPHX_TARGET: Joi.string().valid('container', 'process', 'kubernetes', 'auto').empty(''),
  GRAPHX_CONTAINER_SOCKET: Joi.string().min(1).empty(''),
  GRAPHX_CONTAINER_STORE: Joi.string().min(1).empty(''),
  GRAPHX_RUNTIME_BASE_IMAGE: Joi.string()
    .pattern(/^[a-z0-9][a-z0-9._/:@-]*$/, 'an image reference or offline')
    .default('node:24-bookworm-slim'),
  GRAPHX_WORKER_QUEUES: Joi.string()
    .pattern(/^(control|build)(,(control|build))*$/, 'comma list of control and build')
    .allow('')
    .default('control,build'),
  GRAPHX_TASK_QUEUE_PREFIX: Joi.string()
    .pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, dot, underscore and dash')
    .default('graphx'),
  GRAPHX_WORKER_METRICS_PORT: Joi.number().integer().min(0).max(65535).default(9464),
  GRAPHX_TEMPORAL_SDK_METRICS: flag.default(true),
  TEMPORAL_TLS: flag,
  TEMPORAL_TLS_CA_FILE: Joi.string().empty(''),
  TEMPORAL_TLS_CERT_FILE: Joi.string().empty(''),
  TEMPORAL_TLS_KEY_FILE: Joi.string().empty(''),
  TEMPORAL_TLS_SERVER_NAME: Joi.string().hostname().empty(''),
  TEMPORAL_API_KEY: Joi.string().min(1).empty(''),
})
  .and('TEMPORAL_TLS_CERT_FILE', 'TEMPORAL_TLS_KEY_FILE')
  .unknown(true);

/** Every environment setting read here (the schema's keys and GRAPHX_CONFIG_FILE); README's table is checked against it. */
export function configVariables(): string[] {
  return [...Object.keys((schema.describe() as { keys: Record<string, unknown> }).keys), 'GRAPHX_CONFIG_FILE'].sort();
}

function readJson(file: string): Record<string, unknown> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`Cannot read configuration file ${file}: ${(error as Error).message}`);
  }
}

const projectRoot = path.resolve(__dirname, '..', '..');

/**
 * Loads and validates the configuration. `overrides` win over the environment (tests and `graphx start` flags).
 * @throws ConfigError naming the first bad variable and what it accepts.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Record<string, string> = {}): GraphxConfig {
  const defaults = readJson(path.join(projectRoot, 'config', 'default.json'));
  const fromFile = env.GRAPHX_CONFIG_FILE ? readJson(env.GRAPHX_CONFIG_FILE) : {};
  const raw = { ...defaults, ...fromFile, ...definedOnly(env), ...overrides };
  const { value, error } = schema.validate(raw, { abortEarly: true, convert: true });
  if (error) {
    const detail = error.details[0];
    // An .and() failure has no path: name the pair from its context.
    const variable = String(detail?.path[0] ?? (detail?.context?.missing as string[] | undefined)?.[0] ?? '?');
    throw new ConfigError(`Invalid configuration: ${variable}=${JSON.stringify(raw[variable])}: ${detail?.message}`);
  }
  const v = value as Record<string, any>;
  const dataDir = path.resolve(v.GRAPHX_DATA_DIR);
  const runner = chosenRunner(raw, v);
  // The target's own settings are read with the rest, so a bad one stops start-up here (and the API knows them too).
  const kube = runner === 'kubernetes' ? loadKubeSettings(raw as NodeJS.ProcessEnv, v.DATABASE_URL ?? null) : null;
  return Object.freeze({
    port: v.PORT,
    host: v.GRAPHX_HOST,
    gatewayPort: v.GRAPHX_GATEWAY_PORT,
    gatewayMaxBodyBytes: v.GRAPHX_GATEWAY_MAX_BODY_BYTES,
    gatewayPublicUrl: v.GRAPHX_GATEWAY_PUBLIC_URL ? String(v.GRAPHX_GATEWAY_PUBLIC_URL).replace(/\/+$/, '') : null,
    dataDir,
    databaseUrl: v.DATABASE_URL ?? null,
    temporalAddress: v.TEMPORAL_ADDRESS ?? null,
    temporalNamespace: v.TEMPORAL_NAMESPACE,
    temporalPort: v.GRAPHX_TEMPORAL_PORT,
    temporalUiPort: v.GRAPHX_TEMPORAL_UI_PORT,
    temporalCli: v.GRAPHX_TEMPORAL_CLI ?? null,
    temporalUiUrl: v.GRAPHX_TEMPORAL_UI_URL ? String(v.GRAPHX_TEMPORAL_UI_URL).replace(/\/+$/, '') : null,
    bootstrapApiKey: v.GRAPHX_BOOTSTRAP_API_KEY ?? null,
    secretKey: v.GRAPHX_SECRET_KEY ?? null,
    deploymentMode: v.GRAPHX_DEPLOYMENT_MODE,
    allowFileRepos: v.GRAPHX_ALLOW_FILE_REPOS,
    allowInsecureOauth: v.GRAPHX_ALLOW_INSECURE_OAUTH,
    allowPrivateNetwork: v.GRAPHX_ALLOW_PRIVATE_NETWORK,
    unusedAfterDays: v.GRAPHX_UNUSED_AFTER_DAYS,
    buildTimeoutSeconds: v.GRAPHX_BUILD_TIMEOUT_SECONDS,
    buildStallSeconds: v.GRAPHX_BUILD_STALL_SECONDS,
    buildMemoryMb: v.GRAPHX_BUILD_MEMORY_MB,
    buildRegistryHosts: String(v.GRAPHX_BUILD_REGISTRY_HOSTS).split(','),
    pythonInterpreters: v.GRAPHX_PYTHON_INTERPRETERS ? String(v.GRAPHX_PYTHON_INTERPRETERS).split(',') : undefined,
    logLevel: v.GRAPHX_LOG_LEVEL,
    publicUrl: v.GRAPHX_PUBLIC_URL ?? `http://${v.GRAPHX_HOST}:${v.PORT}`,
    internalApiUrl: v.GRAPHX_INTERNAL_API_URL ?? v.GRAPHX_PUBLIC_URL ?? `http://${v.GRAPHX_HOST}:${v.PORT}`,
    runner,
    kube,
    containerSocket: v.GRAPHX_CONTAINER_SOCKET ?? null,
    containerStoreDir: path.resolve(v.GRAPHX_CONTAINER_STORE ?? path.join(dataDir, 'containers', 'store')),
    runtimeBaseImage: v.GRAPHX_RUNTIME_BASE_IMAGE,
    workerQueues: [...new Set(String(v.GRAPHX_WORKER_QUEUES).split(',').filter(Boolean))] as Array<'control' | 'build'>,
    taskQueuePrefix: v.GRAPHX_TASK_QUEUE_PREFIX,
    workerMetricsPort: v.GRAPHX_WORKER_METRICS_PORT,
    temporalSdkMetrics: v.GRAPHX_TEMPORAL_SDK_METRICS,
    ...temporalSecurity(v),
    settings: carriedSettings(raw, kube !== null),
  });
}

/** The settings a worker process of the stack is given (the Kubernetes target's too when that is the runner). */
function carriedSettings(raw: Record<string, unknown>, kubernetes: boolean): Readonly<Record<string, string>> {
  const carried = [...configVariables(), ...(kubernetes ? kubeVariables() : [])];
  return Object.freeze(
    Object.fromEntries(
      Object.entries(raw)
        .filter(([name]) => carried.includes(name) && name !== 'GRAPHX_CONFIG_FILE')
        .map(([name, value]) => [name, String(value)]),
    ),
  );
}

/**
 * GRAPHX_RUNNER, or GRAPHX_TARGET (the name issue 21 gives the same choice): set both only to the same value. Only
 * values given explicitly count: GRAPHX_RUNNER's default does not contradict a GRAPHX_TARGET.
 */
function chosenRunner(raw: Record<string, unknown>, v: Record<string, any>): GraphxConfig['runner'] {
  const target = v.GRAPHX_TARGET as GraphxConfig['runner'] | undefined;
  if (!target) return v.GRAPHX_RUNNER;
  if (raw.GRAPHX_RUNNER !== undefined && raw.GRAPHX_RUNNER !== '' && v.GRAPHX_RUNNER !== target) {
    throw new ConfigError(
      `Invalid configuration: GRAPHX_TARGET=${target} contradicts GRAPHX_RUNNER=${v.GRAPHX_RUNNER} (they name the same choice; set one).`,
    );
  }
  return target;
}

/** TLS and API-key settings of an external Temporal, checked together (they mean nothing for the dev server). */
function temporalSecurity(v: Record<string, any>): Pick<GraphxConfig, 'temporalTls' | 'temporalApiKey'> {
  const files = {
    TEMPORAL_TLS_CA_FILE: v.TEMPORAL_TLS_CA_FILE as string | undefined,
    TEMPORAL_TLS_CERT_FILE: v.TEMPORAL_TLS_CERT_FILE as string | undefined,
    TEMPORAL_TLS_KEY_FILE: v.TEMPORAL_TLS_KEY_FILE as string | undefined,
  };
  const apiKey = (v.TEMPORAL_API_KEY as string | undefined) ?? null;
  const anyTlsSetting = Object.values(files).some(Boolean) || Boolean(v.TEMPORAL_TLS_SERVER_NAME);
  if (v.TEMPORAL_TLS === false && (anyTlsSetting || apiKey)) {
    throw new ConfigError(
      'Invalid configuration: TEMPORAL_TLS=0 contradicts TEMPORAL_TLS_* or TEMPORAL_API_KEY (an API key needs TLS).',
    );
  }
  const tls = v.TEMPORAL_TLS === true || anyTlsSetting || apiKey !== null;
  if (tls && !v.TEMPORAL_ADDRESS) {
    throw new ConfigError(
      'Invalid configuration: TEMPORAL_TLS, TEMPORAL_TLS_* and TEMPORAL_API_KEY apply to an external Temporal; set TEMPORAL_ADDRESS too.',
    );
  }
  for (const [variable, file] of Object.entries(files)) {
    if (file && !fs.existsSync(file))
      throw new ConfigError(`Invalid configuration: ${variable}=${JSON.stringify(file)}: no such file.`);
  }
  return {
    temporalApiKey: apiKey,
    temporalTls: tls
      ? {
          serverCaFile: files.TEMPORAL_TLS_CA_FILE ? path.resolve(files.TEMPORAL_TLS_CA_FILE) : null,
          clientCertFile: files.TEMPORAL_TLS_CERT_FILE ? path.resolve(files.TEMPORAL_TLS_CERT_FILE) : null,
          clientKeyFile: files.TEMPORAL_TLS_KEY_FILE ? path.resolve(files.TEMPORAL_TLS_KEY_FILE) : null,
          serverName: v.TEMPORAL_TLS_SERVER_NAME ?? null,
        }
      : null,
  };
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)) as Record<string, string>;
}

export { projectRoot };
