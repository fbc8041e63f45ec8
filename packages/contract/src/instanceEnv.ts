/**
 * The environment of an app instance (docs/internal-contracts.md, "Rollout → runtime"): what every runner sets and
 * what the runtime reads when it starts, each variable named once, typed on both ends. The runner adds the
 * deployment's secrets and graphx.json `env` beside it; nothing of the control plane's own environment.
 */
import Joi from 'joi';

/** The variable that carries each part of an instance's identity. */
export const INSTANCE_ENV = {
  port: 'PORT',
  host: 'HOST',
  databaseUri: 'DATABASE_URI',
  configPath: 'GRAPHX_CONFIG_PATH',
  deploymentId: 'GRAPHX_DEPLOYMENT_ID',
  revisionId: 'GRAPHX_REVISION_ID',
  tenantId: 'GRAPHX_TENANT_ID',
  controlPlaneUrl: 'GRAPHX_CONTROL_PLANE_URL',
  controlPlaneSocket: 'GRAPHX_CONTROL_PLANE_SOCKET',
  serviceToken: 'GRAPHX_SERVICE_TOKEN',
  workers: 'GRAPHX_RUNTIME_WORKERS',
} as const;

/** Who an instance is and where it finds what it needs. */
export interface InstanceIdentity {
  port: number;
  /** Interface to listen on: 127.0.0.1 as a process, 0.0.0.0 in a container (the engine publishes the port). */
  host: string;
  /** The deployment's own PostgreSQL database. */
  databaseUri: string;
  /** graphx.json: absolute for a process, relative to the image's working directory in a container. */
  configPath: string;
  deploymentId: string;
  revisionId: string;
  tenantId: string;
  /** Base URL of the control plane's internal API (its host is never dialled when a socket is given). */
  controlPlaneUrl: string;
  /** Unix socket the control plane is reached through (a container's only way out to it); null: TCP to the URL. */
  controlPlaneSocket: string | null;
  /** Bearer token scoped to this deployment. */
  serviceToken: string;
}

/** What the runtime reads: an identity whose deployment fields may be absent (a runtime started by hand). */
export interface InstanceSettings extends Omit<InstanceIdentity, 'deploymentId' | 'revisionId' | 'tenantId'> {
  deploymentId: string | null;
  revisionId: string | null;
  tenantId: string | null;
  /** Processes serving the port together. */
  workers: number;
}

/** The instance's variables for `identity` (the runner adds secrets and graphx.json `env`). */
export function toInstanceEnv(identity: InstanceIdentity): Record<string, string> {
  const env: Record<string, string> = {
    [INSTANCE_ENV.port]: String(identity.port),
    [INSTANCE_ENV.host]: identity.host,
    [INSTANCE_ENV.databaseUri]: identity.databaseUri,
    [INSTANCE_ENV.configPath]: identity.configPath,
    [INSTANCE_ENV.deploymentId]: identity.deploymentId,
    [INSTANCE_ENV.revisionId]: identity.revisionId,
    [INSTANCE_ENV.tenantId]: identity.tenantId,
    [INSTANCE_ENV.controlPlaneUrl]: identity.controlPlaneUrl,
    [INSTANCE_ENV.serviceToken]: identity.serviceToken,
  };
  if (identity.controlPlaneSocket) env[INSTANCE_ENV.controlPlaneSocket] = identity.controlPlaneSocket;
  return env;
}

/** An instance's environment that cannot be served: names the variable. */
export class InstanceEnvError extends Error {
  override name = 'InstanceEnvError';
}

/** `GRAPHX_RUNTIME_WORKERS`: processes serving one port together. */
export const workersSchema = Joi.number().integer().min(1).max(64).default(1);

const schema = Joi.object({
  [INSTANCE_ENV.port]: Joi.number().integer().min(0).max(65535).default(8000),
  [INSTANCE_ENV.host]: Joi.string().default('127.0.0.1'),
  [INSTANCE_ENV.databaseUri]: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .required(),
  [INSTANCE_ENV.configPath]: Joi.string().min(1).default('graphx.json'),
  [INSTANCE_ENV.deploymentId]: Joi.string().empty(''),
  [INSTANCE_ENV.revisionId]: Joi.string().empty(''),
  [INSTANCE_ENV.tenantId]: Joi.string().empty(''),
  [INSTANCE_ENV.controlPlaneUrl]: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .required(),
  [INSTANCE_ENV.serviceToken]: Joi.string().min(8).required(),
  [INSTANCE_ENV.controlPlaneSocket]: Joi.string().min(1).empty(''),
  [INSTANCE_ENV.workers]: workersSchema,
}).unknown(true);

/**
 * The instance's settings from its environment, validated.
 * @throws InstanceEnvError naming the first missing or bad variable.
 */
export function fromInstanceEnv(env: Record<string, string | undefined>): InstanceSettings {
  const { value, error } = schema.validate(env, { abortEarly: true, convert: true });
  if (error) {
    const variable = String(error.details[0]?.path[0] ?? '?');
    throw new InstanceEnvError(`Invalid runtime environment: ${variable}: ${error.details[0]?.message}`);
  }
  return {
    port: value[INSTANCE_ENV.port],
    host: value[INSTANCE_ENV.host],
    databaseUri: value[INSTANCE_ENV.databaseUri],
    configPath: value[INSTANCE_ENV.configPath],
    deploymentId: value[INSTANCE_ENV.deploymentId] ?? null,
    revisionId: value[INSTANCE_ENV.revisionId] ?? null,
    tenantId: value[INSTANCE_ENV.tenantId] ?? null,
    controlPlaneUrl: String(value[INSTANCE_ENV.controlPlaneUrl]).replace(/\/+$/, ''),
    controlPlaneSocket: value[INSTANCE_ENV.controlPlaneSocket] ?? null,
    serviceToken: value[INSTANCE_ENV.serviceToken],
    workers: value[INSTANCE_ENV.workers],
  };
}
