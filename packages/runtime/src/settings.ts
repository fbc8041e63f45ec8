/**
 * The runtime's environment, read and validated once. A rollout sets these (docs/internal-contracts.md, "Rollout →
 * runtime"); `graphx dev` builds the same object from its flags instead. Kept apart from src/config because the
 * runtime runs with the deployment's environment only, never the control plane's.
 */
import path from 'node:path';
import Joi from 'joi';
import {
  fromInstanceEnv,
  INSTANCE_ENV,
  InstanceEnvError,
  workersSchema,
  type InstanceSettings,
} from '@graphx/contract/instanceEnv';
import { ConfigError } from '@graphx/kit/errors';

/** The instance's settings (`@graphx/contract/instanceEnv`), graphx.json's path made absolute. */
export type RuntimeSettings = InstanceSettings;

/**
 * Reads the settings of a deployed runtime from `env`.
 * @throws ConfigError naming the first missing or bad variable.
 */
export function runtimeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): RuntimeSettings {
  try {
    const settings = fromInstanceEnv(env);
    return { ...settings, configPath: path.resolve(settings.configPath) };
  } catch (error) {
    if (error instanceof InstanceEnvError) throw new ConfigError(error.message);
    throw error;
  }
}

/**
 * `GRAPHX_RUNTIME_WORKERS` alone, for `graphx dev` (whose other settings are flags).
 * @throws ConfigError when it is not an integer from 1 to 64.
 */
export function runtimeWorkersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[INSTANCE_ENV.workers];
  const { value, error } = workersSchema.validate(raw === '' ? undefined : raw);
  if (error) throw new ConfigError(`Invalid runtime environment: ${INSTANCE_ENV.workers}: ${error.message}`);
  return value as number;
}

/** Lease and waiting limits of thread runs (threadLeases.ts, threadClaim.ts); tests shorten them. */
export interface RunTuning {
  leaseMs: number;
  enqueueWaitMs: number;
  /** Background runs one instance executes at once. */
  backgroundConcurrency: number;
  webhookDestinations: 'public' | 'private' | 'any';
  /** The longest the cron scheduler sleeps without news (it wakes when a cron is due or changes anywhere). */
  cronPollMs: number;
  /** The largest request body the app reads; a larger one is a 413 (HTTP_MAX_REQUEST_BODY_BYTES, as the anchor). */
  maxRequestBodyBytes: number;
  /** How often expired thread TTLs are looked for. */
  ttlSweepMs: number;
  /**
   * GRAPHX_RUNTIME_ROLE: `all` (default: HTTP and background runs), `api` (HTTP; executes only the streamed runs it
   * holds a response for, never other background runs) or `queue` (a background-run worker; its HTTP serves probes).
   * `api` and `queue` processes over one database split one deployment's two sides (the Kubernetes queue Deployment).
   */
  role: 'all' | 'api' | 'queue';
  /** The quiet window after which an idle instance gives its young generation back (idleMemory.ts); 0: never. */
  idleCollectMs: number;
  /** How long a cancelled Python call may go unanswered before its executor is killed (python/executor.ts). */
  pythonCancelGraceMs: number;
}

/** The Python Agent Server's default body limit (HTTP_MAX_REQUEST_BODY_BYTES, 300 MB), ours too. */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 300 * 1024 * 1024;

const tuningSchema = Joi.object({
  GRAPHX_RUNTIME_LEASE_MS: Joi.number().integer().min(300).max(600_000).empty('').default(30_000),
  GRAPHX_RUNTIME_ENQUEUE_WAIT_MS: Joi.number().integer().min(0).max(3_600_000).empty('').default(120_000),
  GRAPHX_RUNTIME_BACKGROUND_CONCURRENCY: Joi.number().integer().min(1).max(1000).empty('').default(10),
  GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS: Joi.string().valid('public', 'private', 'any').empty('').default('public'),
  GRAPHX_RUNTIME_CRON_POLL_MS: Joi.number().integer().min(50).max(3_600_000).empty('').default(60_000),
  HTTP_MAX_REQUEST_BODY_BYTES: Joi.number().integer().min(1024).empty('').default(DEFAULT_MAX_REQUEST_BODY_BYTES),
  GRAPHX_RUNTIME_TTL_SWEEP_MS: Joi.number().integer().min(50).max(3_600_000).empty('').default(60_000),
  GRAPHX_RUNTIME_ROLE: Joi.string().valid('all', 'api', 'queue').empty('').default('all'),
  GRAPHX_RUNTIME_IDLE_COLLECT_MS: Joi.number().integer().min(0).max(3_600_000).empty('').default(10_000),
  GRAPHX_RUNTIME_PYTHON_CANCEL_GRACE_MS: Joi.number().integer().min(100).max(3_600_000).empty('').default(30_000),
}).unknown(true);

/**
 * `GRAPHX_RUNTIME_LEASE_MS` (default 30 s), `GRAPHX_RUNTIME_ENQUEUE_WAIT_MS` (default 120 s),
 * `GRAPHX_RUNTIME_BACKGROUND_CONCURRENCY` (default 10), `GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS` (`public`: only
 * public addresses; `private`: also private ranges; `any`: loopback too, for development) and
 * `GRAPHX_RUNTIME_CRON_POLL_MS` (the cron scheduler's longest sleep, default 60 s: it wakes when a cron is due or
 * changes), `GRAPHX_RUNTIME_TTL_SWEEP_MS` (default 60 s),
 * `GRAPHX_RUNTIME_IDLE_COLLECT_MS` (default 10 s; 0 turns the idle collection off),
 * `GRAPHX_RUNTIME_PYTHON_CANCEL_GRACE_MS` (default 30 s: a cancelled Python call still unanswered by then means a stuck executor,
 * which is killed), and the anchor's
 * `HTTP_MAX_REQUEST_BODY_BYTES` (default 300 MB).
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
    maxRequestBodyBytes: value.HTTP_MAX_REQUEST_BODY_BYTES,
    ttlSweepMs: value.GRAPHX_RUNTIME_TTL_SWEEP_MS,
    role: value.GRAPHX_RUNTIME_ROLE,
    idleCollectMs: value.GRAPHX_RUNTIME_IDLE_COLLECT_MS,
    pythonCancelGraceMs: value.GRAPHX_RUNTIME_PYTHON_CANCEL_GRACE_MS,
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
