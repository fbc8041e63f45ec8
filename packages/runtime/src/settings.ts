/**
 * The runtime's environment, read and validated once. A rollout sets these (docs/internal-contracts.md, "Rollout →
 * runtime"); `graphx dev` builds the same object from its flags instead. Kept apart from src/config because the
 * runtime runs with the deployment's environment only, never the control plane's.
 */
import path from 'node:path';
import Joi from 'joi';
import { ConfigError } from '@graphx/kit/errors';

export interface RuntimeSettings {
  port: number;
  host: string;
  /** The deployment's own PostgreSQL database. */
  databaseUri: string;
  /** Absolute path of graphx.json; its directory is the application directory. */
  configPath: string;
  deploymentId: string | null;
  revisionId: string | null;
  tenantId: string | null;
  /** Control-plane base URL; null in `graphx dev` (no API-key check, no tracing). */
  controlPlaneUrl: string | null;
  /** Unix socket the control plane is reached through (a container's only way out to it); null: TCP to the URL. */
  controlPlaneSocket: string | null;
  serviceToken: string | null;
  /** Processes serving the port together (workers.ts). */
  workers: number;
}

const workersSchema = Joi.number().integer().min(1).max(64).default(1);

const schema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(8000),
  HOST: Joi.string().default('127.0.0.1'),
  DATABASE_URI: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .required(),
  GRAPHX_CONFIG_PATH: Joi.string().min(1).default('graphx.json'),
  GRAPHX_DEPLOYMENT_ID: Joi.string().empty(''),
  GRAPHX_REVISION_ID: Joi.string().empty(''),
  GRAPHX_TENANT_ID: Joi.string().empty(''),
  GRAPHX_CONTROL_PLANE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .required(),
  GRAPHX_SERVICE_TOKEN: Joi.string().min(8).required(),
  GRAPHX_CONTROL_PLANE_SOCKET: Joi.string().min(1).empty(''),
  GRAPHX_RUNTIME_WORKERS: workersSchema,
}).unknown(true);

/**
 * Reads the settings of a deployed runtime from `env`.
 * @throws ConfigError naming the first missing or bad variable.
 */
export function runtimeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): RuntimeSettings {
  const { value, error } = schema.validate(env, { abortEarly: true, convert: true });
  if (error) {
    const variable = String(error.details[0]?.path[0] ?? '?');
    throw new ConfigError(`Invalid runtime environment: ${variable}: ${error.details[0]?.message}`);
  }
  return {
    port: value.PORT,
    host: value.HOST,
    databaseUri: value.DATABASE_URI,
    configPath: path.resolve(value.GRAPHX_CONFIG_PATH),
    deploymentId: value.GRAPHX_DEPLOYMENT_ID ?? null,
    revisionId: value.GRAPHX_REVISION_ID ?? null,
    tenantId: value.GRAPHX_TENANT_ID ?? null,
    controlPlaneUrl: String(value.GRAPHX_CONTROL_PLANE_URL).replace(/\/+$/, ''),
    controlPlaneSocket: value.GRAPHX_CONTROL_PLANE_SOCKET ?? null,
    serviceToken: value.GRAPHX_SERVICE_TOKEN,
    workers: value.GRAPHX_RUNTIME_WORKERS,
  };
}

/**
 * `GRAPHX_RUNTIME_WORKERS` alone, for `graphx dev` (whose other settings are flags).
 * @throws ConfigError when it is not an integer from 1 to 64.
 */
export function runtimeWorkersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const { value, error } = workersSchema.validate(env.GRAPHX_RUNTIME_WORKERS === '' ? undefined : env.GRAPHX_RUNTIME_WORKERS);
  if (error) throw new ConfigError(`Invalid runtime environment: GRAPHX_RUNTIME_WORKERS: ${error.message}`);
  return value as number;
}

/** Lease and waiting limits of thread runs (threadLeases.ts, threadClaim.ts); tests shorten them. */
export interface RunTuning {
  leaseMs: number;
  enqueueWaitMs: number;
  /** Background runs one instance executes at once. */
  backgroundConcurrency: number;
  webhookDestinations: 'public' | 'private' | 'any';
  /** How often each instance looks for due crons (a tick fires at most this late). */
  cronPollMs: number;
}

const tuningSchema = Joi.object({
  GRAPHX_RUNTIME_LEASE_MS: Joi.number().integer().min(300).max(600_000).empty('').default(30_000),
  GRAPHX_RUNTIME_ENQUEUE_WAIT_MS: Joi.number().integer().min(0).max(3_600_000).empty('').default(120_000),
  GRAPHX_RUNTIME_BACKGROUND_CONCURRENCY: Joi.number().integer().min(1).max(1000).empty('').default(10),
  GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS: Joi.string().valid('public', 'private', 'any').empty('').default('public'),
  GRAPHX_RUNTIME_CRON_POLL_MS: Joi.number().integer().min(50).max(60_000).empty('').default(1000),
}).unknown(true);

/**
 * `GRAPHX_RUNTIME_LEASE_MS` (default 30 s), `GRAPHX_RUNTIME_ENQUEUE_WAIT_MS` (default 120 s),
 * `GRAPHX_RUNTIME_BACKGROUND_CONCURRENCY` (default 10), `GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS` (`public`: only
 * public addresses; `private`: also private ranges; `any`: loopback too, for development) and
 * `GRAPHX_RUNTIME_CRON_POLL_MS` (default 1 s).
 * @throws ConfigError for a value out of range.
 */
export function runTuningFromEnv(env: NodeJS.ProcessEnv = process.env): RunTuning {
  const { value, error } = tuningSchema.validate(env, { convert: true });
  if (error) throw new ConfigError(`Invalid runtime environment: ${error.message}`);
  return {
    leaseMs: value.GRAPHX_RUNTIME_LEASE_MS,
    enqueueWaitMs: value.GRAPHX_RUNTIME_ENQUEUE_WAIT_MS,
    backgroundConcurrency: value.GRAPHX_RUNTIME_BACKGROUND_CONCURRENCY,
    webhookDestinations: value.GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS,
    cronPollMs: value.GRAPHX_RUNTIME_CRON_POLL_MS,
  };
}

export type AssistantDefaults = Record<string, { config: Record<string, unknown>; context: Record<string, unknown> }>;

const assistantDefaultsSchema = Joi.object().pattern(Joi.string(), Joi.object().unknown(true));

/**
 * `LANGGRAPH_CONFIG`, as the anchor reads it: `{"<graph id>": {configurable…, context…}}`, the config (and context)
 * of each graph's system assistant. It may come from graphx.json `env` (applied to the environment before this).
 * @throws ConfigError when it is not a JSON object of objects.
 */
export function assistantDefaultsFromEnv(env: NodeJS.ProcessEnv = process.env): AssistantDefaults {
  const text = env.LANGGRAPH_CONFIG;
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`Invalid runtime environment: LANGGRAPH_CONFIG is not JSON: ${(error as Error).message}`);
  }
  const { value, error } = assistantDefaultsSchema.validate(parsed);
  if (error) throw new ConfigError(`Invalid runtime environment: LANGGRAPH_CONFIG: ${error.message}`);
  return Object.fromEntries(
    Object.entries(value as Record<string, Record<string, unknown>>).map(([graphId, { context, ...config }]) => [
      graphId,
      { config, context: (context as Record<string, unknown> | undefined) ?? {} },
    ]),
  );
}
