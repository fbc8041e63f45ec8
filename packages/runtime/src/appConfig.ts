/**
 * graphx.json of an application: `graphs` (`"name": "./file.ts:export"`), `env` (object or .env path), `auth.path`,
 * `http` (`app`: custom routes, `cors`, `disable_*` route groups), `ui` (agent → generative-UI component file) and
 * `ui_config.shared`.
 * Unknown keys are kept and ignored, so configuration files written for the anchors load unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import Joi from 'joi';
import { ConfigError } from '@graphx/kit/errors';
import { logger } from '@graphx/kit/logger';
import { missingEnvFileWarning } from './configKeys';
import type { CorsConfig } from './http/cors';

export interface ModuleExportRef {
  /** Absolute path of the module file. */
  file: string;
  exportName: string;
}

export interface GraphSpec extends ModuleExportRef {
  graphId: string;
  description: string | null;
}

export interface AppConfig {
  appDir: string;
  graphs: GraphSpec[];
  env: Record<string, string>;
  auth: ModuleExportRef | null;
  http: HttpConfig;
  /** Generative UI: agent name → component file (relative to appDir), and the packages the page shares with it. */
  ui: { components: Record<string, string>; shared: string[] };
}

/** Route groups `http.disable_<group>` turns off (the anchor's names). */
export const ROUTE_GROUPS = ['assistants', 'threads', 'runs', 'store', 'meta', 'ui', 'mcp'] as const;
export type RouteGroup = (typeof ROUTE_GROUPS)[number];

export interface HttpConfig {
  /** A Fetch-style app (`fetch(request)`, e.g. Hono) mounted before the API routes. */
  app: ModuleExportRef | null;
  cors: CorsConfig | null;
  disabled: RouteGroup[];
}

const exportRef = Joi.string().pattern(/^[^:]+(:[A-Za-z_$][\w$]*)?$/, '<file>:<export>');

const schema = Joi.object({
  graphs: Joi.object()
    .pattern(
      /^[A-Za-z0-9_.-]+$/,
      Joi.alternatives(exportRef, Joi.object({ path: exportRef.required(), description: Joi.string() }).unknown(true)),
    )
    .min(1)
    .required(),
  env: Joi.alternatives(
    Joi.object().pattern(/.*/, Joi.alternatives(Joi.string(), Joi.number(), Joi.boolean())),
    Joi.string(),
    // langgraph-cli's list of names to pass through: their values come from the deployment's secrets here.
    Joi.array().items(Joi.string()),
  ),
  auth: Joi.object({ path: exportRef.required() }).unknown(true),
  ui: Joi.object().pattern(/^[A-Za-z0-9_.-]+$/, Joi.string().min(1)),
  ui_config: Joi.object({ shared: Joi.array().items(Joi.string()) }).unknown(true),
  http: Joi.object({
    app: exportRef,
    cors: Joi.object({
      allow_origins: Joi.array().items(Joi.string()),
      allow_origin_regex: Joi.string().custom((pattern: string, helpers) => {
        try {
          new RegExp(pattern);
          return pattern;
        } catch {
          return helpers.message({ custom: '"allow_origin_regex" is not a regular expression' });
        }
      }),
      allow_methods: Joi.array().items(Joi.string()),
      allow_headers: Joi.array().items(Joi.string()),
      allow_credentials: Joi.boolean(),
      expose_headers: Joi.array().items(Joi.string()),
      max_age: Joi.number().integer().min(0),
    }).unknown(true),
    ...Object.fromEntries(ROUTE_GROUPS.map((group) => [`disable_${group}`, Joi.boolean()])),
  }).unknown(true),
}).unknown(true);

function parseRef(ref: string, appDir: string): ModuleExportRef {
  const separator = ref.lastIndexOf(':');
  const [file, exportName] = separator > 0 ? [ref.slice(0, separator), ref.slice(separator + 1)] : [ref, 'default'];
  return { file: path.resolve(appDir, file), exportName };
}

function readEnv(env: unknown, appDir: string): Record<string, string> {
  if (env === undefined || Array.isArray(env)) return {};
  if (typeof env === 'string') {
    const file = path.resolve(appDir, env);
    if (!fs.existsSync(file)) {
      // As the LangGraph JS dev server does: the starters git-ignore `.env`, so a deployment has none.
      logger.warn(missingEnvFileWarning({ env }, appDir) as string);
      return {};
    }
    return parseEnv(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  }
  return Object.fromEntries(Object.entries(env as Record<string, unknown>).map(([key, value]) => [key, String(value)]));
}

/**
 * Reads and validates graphx.json.
 * @throws ConfigError when the file is missing, not JSON, or does not match the schema.
 */
export function loadAppConfig(configPath: string): AppConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(configPath, 'utf8'));
  } catch (error) {
    throw new ConfigError(`Cannot read ${configPath}: ${(error as Error).message}`);
  }
  const { value, error } = schema.validate(raw, { abortEarly: true });
  if (error) throw new ConfigError(`Invalid ${path.basename(configPath)}: ${error.message}`);
  const appDir = path.dirname(path.resolve(configPath));
  const graphs = Object.entries(value.graphs as Record<string, string | { path: string; description?: string }>).map(
    ([graphId, entry]) => {
      const ref = typeof entry === 'string' ? entry : entry.path;
      return { graphId, description: typeof entry === 'string' ? null : (entry.description ?? null), ...parseRef(ref, appDir) };
    },
  );
  return {
    appDir,
    graphs,
    env: readEnv(value.env, appDir),
    auth: value.auth ? parseRef(value.auth.path, appDir) : null,
    http: {
      app: value.http?.app ? parseRef(value.http.app, appDir) : null,
      cors: value.http?.cors ?? null,
      disabled: ROUTE_GROUPS.filter((group) => value.http?.[`disable_${group}`] === true),
    },
    ui: { components: value.ui ?? {}, shared: value.ui_config?.shared ?? [] },
  };
}

/** Applies graphx.json `env` without overriding what the process already has (the deployment's secrets win). */
export function applyAppEnv(env: Record<string, string>): void {
  for (const [key, value] of Object.entries(env)) {
    if (process.env[key] === undefined) process.env[key] = value;
  }
}
