/**
 * graphx.json of the application this runtime serves, read through the contract's one reader
 * (`@graphx/contract/graphxConfig`) and resolved where the application lives: module paths become absolute, the `env`
 * file is read and parsed. Keys the runtime does not know are named in a warning (a build refuses them earlier).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  GraphxConfigError,
  missingEnvFileWarning,
  parseEnvFile,
  readGraphxConfig,
  type ConfigurableHeadersConfig,
  type CorsConfig,
  type EnvSource,
  type ExportRef,
  type ModuleLanguage,
  type PythonConfig,
  type RouteGroup,
} from '@graphx/contract/graphxConfig';
import { ConfigError } from '@graphx/kit/errors';
import { logger } from '@graphx/kit/logger';

export { ROUTE_GROUPS, type RouteGroup } from '@graphx/contract/graphxConfig';

export interface ModuleExportRef {
  /** Absolute path of the module file (a Python module named by `module` has none: ''). */
  file: string;
  exportName: string;
  language: ModuleLanguage;
  /** `package.module` of a Python module named by its dotted name, else null. */
  module: string | null;
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
  /** The Python side (version, dependencies) when a graph or the auth is Python; else null. */
  python: PythonConfig | null;
}

export interface HttpConfig {
  /** A Fetch-style app (`fetch(request)`, e.g. Hono) or a Python ASGI app (Starlette, FastAPI), asked before the API. */
  app: ModuleExportRef | null;
  cors: CorsConfig | null;
  disabled: RouteGroup[];
  /** `http.configurable_headers`: which request headers a run's graph sees (null: `x-*` and `user-agent`). */
  configurableHeaders: ConfigurableHeadersConfig | null;
}

/** An export of graphx.json with its module's absolute path. */
function resolved(ref: ExportRef, appDir: string): ModuleExportRef {
  return {
    file: ref.module ? '' : path.resolve(appDir, ref.path),
    exportName: ref.exportName,
    language: ref.language,
    module: ref.module,
  };
}

function readEnv(env: EnvSource, appDir: string): Record<string, string> {
  if (env.kind === 'values') return env.values;
  if (env.kind !== 'file') return {};
  const file = path.resolve(appDir, env.path);
  if (!fs.existsSync(file)) {
    // As the LangGraph JS dev server does: the starters git-ignore `.env`, so a deployment has none.
    logger.warn(missingEnvFileWarning(env.path));
    return {};
  }
  return parseEnvFile(fs.readFileSync(file, 'utf8'));
}

/**
 * Reads and validates graphx.json.
 * @throws ConfigError when the file is missing, not JSON, or does not match the schema.
 */
export function loadAppConfig(configPath: string): AppConfig {
  let read;
  try {
    read = readGraphxConfig(configPath, { unknownKeys: 'warn' });
  } catch (error) {
    if (!(error instanceof GraphxConfigError)) throw error;
    const sentence = error.message.startsWith('cannot be read')
      ? `Cannot read ${configPath}: ${error.message.replace(/^cannot be read: /, '')}`
      : `Invalid ${path.basename(configPath)}: graphx.json ${error.message}`;
    throw new ConfigError(sentence);
  }
  for (const warning of read.warnings) logger.warn(warning);
  const { config } = read;
  const appDir = path.dirname(path.resolve(configPath));
  return {
    appDir,
    graphs: config.graphs.map((graph) => ({
      graphId: graph.graphId,
      description: graph.description,
      ...resolved(graph, appDir),
    })),
    env: readEnv(config.env, appDir),
    auth: config.auth ? resolved(config.auth, appDir) : null,
    http: {
      app: config.http.app ? resolved(config.http.app, appDir) : null,
      cors: config.http.cors,
      disabled: config.http.disabled,
      configurableHeaders: config.http.configurableHeaders,
    },
    ui: config.ui,
    python: config.python,
  };
}

/** Applies graphx.json `env` without overriding what the process already has (the deployment's secrets win). */
export function applyAppEnv(env: Record<string, string>): void {
  for (const [key, value] of Object.entries(env)) {
    if (process.env[key] === undefined) process.env[key] = value;
  }
}
