/**
 * graphx.json, read once for everyone: the build validates it, the runner sets the instance's environment from it,
 * the runtime serves what it names. It takes the anchor's `langgraph.json` as it is: every documented key is accepted;
 * per runner a key is honoured or named in a warning (never a failure); a key nobody documents is a mistake (a typo,
 * usually) and fails the build by name (`graphx dev` only warns). Paths stay as written, relative to the file's
 * directory: each reader resolves them where the application lives (a clone, an image, a developer's folder).
 */
import fs from 'node:fs';
import { parseEnv } from 'node:util';
import Joi from 'joi';
import { moduleLanguage, pythonConfigOf, type ModuleLanguage, type PythonConfig } from './pythonConfig';
import {
  configurableHeadersOf,
  httpSchema,
  ROUTE_GROUPS,
  type ConfigurableHeadersConfig,
  type CorsConfig,
  type RouteGroup,
} from './httpConfig';

export { ROUTE_GROUPS, type ConfigurableHeadersConfig, type CorsConfig, type RouteGroup } from './httpConfig';
export {
  DEFAULT_PYTHON_VERSION,
  OFFERED_PYTHON_VERSIONS,
  moduleLanguage,
  requestedPythonVersion,
  type ModuleLanguage,
  type PythonConfig,
} from './pythonConfig';

/** Where a revision runs: what a key does depends on it (`dockerfile_lines` needs an image). */
export type Runner = 'process' | 'container';

/** graphx.json cannot be used as it is; the message names the file's key and what it accepts. */
export class GraphxConfigError extends Error {
  override name = 'GraphxConfigError';
}

/**
 * `<file>:<export>` of graphx.json (the export defaults to `default`); `path` relative to graphx.json's directory.
 * A Python module named by its dotted name (`package.module:variable`) has `module` set and no file.
 */
export interface ExportRef {
  path: string;
  exportName: string;
  language: ModuleLanguage;
  /** `package.module` of a Python graph named by module, else null. */
  module: string | null;
}

export interface GraphEntry extends ExportRef {
  graphId: string;
  description: string | null;
}

/** Where the application's environment comes from: values, a dotenv file, or names whose values are secrets. */
export type EnvSource =
  | { kind: 'none' }
  | { kind: 'values'; values: Record<string, string> }
  | { kind: 'file'; path: string }
  | { kind: 'names'; names: string[] };

export interface GraphxConfig {
  graphs: GraphEntry[];
  env: EnvSource;
  auth: ExportRef | null;
  http: {
    app: ExportRef | null;
    cors: CorsConfig | null;
    disabled: RouteGroup[];
    configurableHeaders: ConfigurableHeadersConfig | null;
  };
  /** Generative UI: agent name → component file, and the packages the page shares with it. */
  ui: { components: Record<string, string>; shared: string[] };
  /** Extra lines of the revision image's Dockerfile (checked: none reaches another image, cache or network). */
  dockerfileLines: string[];
  nodeVersion: string | null;
  /** `node_version` as an offered major (OFFERED_NODE_MAJORS), or null when not set: images of that Node line. */
  nodeMajor: number | null;
  /** What Python graphs (or a Python auth) need; null when the app names no Python module. */
  python: PythonConfig | null;
}

/** The Node majors images are offered in (graphx.json `node_version`): the LTS lines the npm registry ships. */
export const OFFERED_NODE_MAJORS = [20, 22, 24] as const;
/** The Node major of images when graphx.json names none: the active LTS. */
export const DEFAULT_NODE_MAJOR = 24;

/**
 * graphx.json `node_version` as a major (`"22"`, `22`; `"22.11"` means 22 as the anchor reads it), or null when it is
 * not set. @throws GraphxConfigError naming the versions offered, for any other value.
 */
export function requestedNodeMajor(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const major = Number(/^\s*(\d+)(\.\d+)*\s*$/.exec(String(value))?.[1]);
  if (!(OFFERED_NODE_MAJORS as readonly number[]).includes(major)) {
    throw new GraphxConfigError(
      `"node_version" ${JSON.stringify(value)} is not offered: use ${OFFERED_NODE_MAJORS.join(', ')} (default ${DEFAULT_NODE_MAJOR}).`,
    );
  }
  return major;
}

export interface ReadGraphxConfig {
  config: GraphxConfig;
  /** One sentence per documented key without effect on this runner (and per unknown key where they only warn). */
  warnings: string[];
}

const AS_PROCESS = 'apps run as processes, not images';
const IMAGE_BASE = 'revision images build on graphx-runtime';

/** Every documented key and what it does per runner: `true` honoured, a string the reason it has no effect. */
const KEYS: Record<string, Record<Runner, true | string>> = {
  $schema: { process: true, container: true },
  description: { process: true, container: true },
  graphs: { process: true, container: true },
  env: { process: true, container: true },
  auth: { process: true, container: true },
  http: { process: true, container: true },
  ui: { process: true, container: true },
  ui_config: { process: true, container: true },
  dependencies: { process: true, container: true },
  node_version: { process: true, container: true },
  dockerfile_lines: { process: AS_PROCESS, container: true },
  base_image: { process: AS_PROCESS, container: IMAGE_BASE },
  image_distro: { process: AS_PROCESS, container: IMAGE_BASE },
  docker_compose_file: { process: AS_PROCESS, container: IMAGE_BASE },
  _INTERNAL_docker_tag: { process: AS_PROCESS, container: IMAGE_BASE },
  keep_pkg_tools: { process: AS_PROCESS, container: IMAGE_BASE },
  api_version: {
    process: 'the platform serves its own agent-server API version',
    container: 'the platform serves its own agent-server API version',
  },
  python_version: { process: true, container: true },
  pip_config_file: { process: true, container: true },
  pip_installer: { process: true, container: true },
  source: { process: true, container: true },
  store: { process: 'the store has no semantic index here', container: 'the store has no semantic index here' },
  checkpointer: {
    process: 'threads are kept in the deployment database',
    container: 'threads are kept in the deployment database',
  },
  keep_alive: { process: 'streams send their own keep-alive comments', container: 'streams send their own keep-alive comments' },
  webhooks: { process: 'webhook settings are not applied', container: 'webhook settings are not applied' },
  encryption: { process: 'secrets at rest use the platform key', container: 'secrets at rest use the platform key' },
  middleware_order: { process: 'custom middleware is not mounted', container: 'custom middleware is not mounted' },
  node_loader: { process: 'graphs load through the platform loader', container: 'graphs load through the platform loader' },
};

/** Every key graphx.json accepts (for messages). */
export function documentedKeys(): string[] {
  return Object.keys(KEYS)
    .filter((key) => !key.startsWith('_') && key !== '$schema')
    .sort();
}

const exportRefText = Joi.string().pattern(/^[^:]+(:[A-Za-z_$][\w$]*)?$/, '<file>:<export>');
const graphSpec = Joi.alternatives(
  Joi.string().pattern(/^.+:[A-Za-z_$][\w$]*$/, '<file>:<export>'),
  Joi.object({
    path: Joi.string()
      .pattern(/^.+:[A-Za-z_$][\w$]*$/, '<file>:<export>')
      .required(),
    description: Joi.string(),
  })
    .unknown(true)
    .required(),
);

/** Instructions and flags that would reach outside the build's own context: other images, shared caches, networks. */
const REFUSED_DOCKERFILE_LINE = /^\s*(FROM|ONBUILD)\b|--(mount|from|network|security)\b/i;

const schema = Joi.object({
  env: Joi.alternatives(
    Joi.object().pattern(/.*/, Joi.alternatives(Joi.string(), Joi.number(), Joi.boolean())),
    Joi.string(),
    // langgraph-cli's list of names to pass through: their values come from the deployment's secrets here.
    Joi.array().items(Joi.string()),
  ),
  auth: Joi.object({ path: exportRefText.required() }).unknown(true),
  ui: Joi.object().pattern(/^[A-Za-z0-9_.-]+$/, Joi.string().min(1)),
  ui_config: Joi.object({ shared: Joi.array().items(Joi.string()) }).unknown(true),
  http: httpSchema(exportRefText),
  node_version: Joi.alternatives(Joi.string(), Joi.number()),
  python_version: Joi.alternatives(Joi.string(), Joi.number()),
  dependencies: Joi.array().items(Joi.string().min(1)),
  pip_config_file: Joi.string().min(1),
  pip_installer: Joi.string().valid('auto', 'pip', 'uv'),
  // langgraph-cli's UvSource: a uv project (pyproject.toml and uv.lock at `root`), `package` a workspace member.
  source: Joi.object({
    kind: Joi.string().valid('uv').required(),
    root: Joi.string().trim().min(1),
    package: Joi.string().trim().min(1),
  }),
}).unknown(true);

/** `<file>:<export>` → its parts; a missing export is `default`. */
export function exportRef(text: string): ExportRef {
  const separator = text.lastIndexOf(':');
  const [modulePath, exportName] = separator > 0 ? [text.slice(0, separator), text.slice(separator + 1)] : [text, 'default'];
  return { path: modulePath, exportName, ...moduleLanguage(modulePath) };
}

function graphsOf(graphs: unknown): GraphEntry[] {
  if (!graphs || typeof graphs !== 'object' || Array.isArray(graphs) || Object.keys(graphs).length === 0) {
    throw new GraphxConfigError('must name at least one graph in "graphs".');
  }
  return Object.entries(graphs as Record<string, unknown>).map(([graphId, entry]) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(graphId)) {
      throw new GraphxConfigError(`graph name "${graphId}" may hold only letters, digits, "_", "." and "-".`);
    }
    if (graphSpec.validate(entry).error) {
      throw new GraphxConfigError(`graph "${graphId}" must be "<file>:<export>" or {"path": "<file>:<export>", "description"}.`);
    }
    const spec = entry as string | { path: string; description?: string };
    const ref = typeof spec === 'string' ? spec : spec.path;
    return { graphId, description: typeof spec === 'string' ? null : (spec.description ?? null), ...exportRef(ref) };
  });
}

/** `dockerfile_lines`: one-line strings, none naming another image, shared cache or network. */
export function dockerfileLines(config: Record<string, unknown>): string[] {
  const lines = config.dockerfile_lines ?? [];
  if (!Array.isArray(lines) || lines.some((line) => typeof line !== 'string' || line.includes('\n'))) {
    throw new GraphxConfigError('graphx.json "dockerfile_lines" must be a list of one-line strings.');
  }
  const refused = (lines as string[]).find((line) => REFUSED_DOCKERFILE_LINE.test(line));
  if (refused) {
    throw new GraphxConfigError(
      `graphx.json "dockerfile_lines" may not use FROM, ONBUILD, --from, --mount, --network or --security: "${refused}".`,
    );
  }
  return lines as string[];
}

function envSourceOf(env: unknown): EnvSource {
  if (env === undefined) return { kind: 'none' };
  if (typeof env === 'string') return { kind: 'file', path: env };
  if (Array.isArray(env)) return { kind: 'names', names: env as string[] };
  return {
    kind: 'values',
    values: Object.fromEntries(Object.entries(env as Record<string, unknown>).map(([key, value]) => [key, String(value)])),
  };
}

/** The warnings for keys that have no effect on `runner` (none without one), and the keys nobody documents. */
function reviewKeys(raw: Record<string, unknown>, runner: Runner | undefined): { warnings: string[]; unknown: string[] } {
  const warnings: string[] = [];
  const unknown: string[] = [];
  for (const key of Object.keys(raw)) {
    const effects = KEYS[key];
    const effect = effects && runner ? effects[runner] : true;
    if (effects === undefined) unknown.push(key);
    else if (effect !== true)
      warnings.push(`graphx.json "${key}" is accepted but not supported here (${effect}); it has no effect.`);
  }
  return { warnings, unknown };
}

/**
 * Parses graphx.json text as `runner` builds it, or (no runner) as the runtime serves an application already built.
 * @param options.unknownKeys `error` (builds) or `warn` (`graphx dev`, where a developer's file may carry other keys).
 * @param options.runningNode the Node major version process-runner instances run on (a different `node_version` is a
 *   warning there; images run the asked one). A build (`runner` given) refuses a `node_version` not offered.
 * @throws GraphxConfigError naming the key that is wrong (the caller says which file).
 */
export function parseGraphxConfig(
  text: string,
  options: { runner?: Runner; unknownKeys?: 'error' | 'warn'; runningNode?: string },
): ReadGraphxConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new GraphxConfigError(`is not valid JSON: ${(error as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new GraphxConfigError('must be a JSON object.');
  const record = raw as Record<string, unknown>;
  const { warnings, unknown } = reviewKeys(record, options.runner);
  if (unknown.length > 0) {
    const keys = unknown.map((key) => `"${key}"`).join(', ');
    const sentence = `has unknown key(s) ${keys}; graphx.json accepts ${documentedKeys().join(', ')}.`;
    if ((options.unknownKeys ?? 'error') === 'error') throw new GraphxConfigError(sentence);
    warnings.push(`graphx.json ${sentence}`);
  }
  const graphs = graphsOf(record.graphs);
  const { value, error } = schema.validate(record, { abortEarly: true });
  if (error) throw new GraphxConfigError(`is invalid: ${error.message}`);
  const nodeMajor = options.runner ? requestedNodeMajor(value.node_version) : null;
  const running = options.runningNode;
  if (options.runner !== 'container' && running && nodeMajor !== null && String(nodeMajor) !== running) {
    warnings.push(`graphx.json asks for node_version ${String(value.node_version)}; apps run on Node ${running} here.`);
  }
  const auth = value.auth ? exportRef(value.auth.path) : null;
  const httpApp = value.http?.app ? exportRef(value.http.app) : null;
  const config: GraphxConfig = {
    graphs,
    env: envSourceOf(value.env),
    auth,
    http: {
      app: httpApp,
      cors: value.http?.cors ?? null,
      disabled: ROUTE_GROUPS.filter((group) => value.http?.[`disable_${group}`] === true),
      configurableHeaders: configurableHeadersOf(value.http?.configurable_headers),
    },
    ui: { components: value.ui ?? {}, shared: value.ui_config?.shared ?? [] },
    dockerfileLines: options.runner === 'container' ? dockerfileLines(record) : [],
    nodeVersion: value.node_version === undefined ? null : String(value.node_version),
    nodeMajor,
    python: pythonConfigOf(value, [...graphs, ...(auth ? [auth] : []), ...(httpApp ? [httpApp] : [])]),
  };
  return { config, warnings };
}

/**
 * Reads graphx.json at `file` (the one file this package reads) and parses it; a file that cannot be read is a
 * GraphxConfigError too. `read` lets a caller go through its own guard (a regular file inside the repository).
 */
export function readGraphxConfig(
  file: string,
  options: Parameters<typeof parseGraphxConfig>[1],
  read: (file: string) => string = (path) => fs.readFileSync(path, 'utf8'),
): ReadGraphxConfig {
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    throw new GraphxConfigError(`cannot be read: ${(error as Error).message}`);
  }
  return parseGraphxConfig(text, options);
}

/** A dotenv file's variables (`KEY=value`, comments, quotes, `export`): the one parser of env files. */
export function parseEnvFile(text: string): Record<string, string> {
  return parseEnv(text) as Record<string, string>;
}

/** The warning for an `env` file that is not there (the starters git-ignore `.env`). */
export function missingEnvFileWarning(envFile: string): string {
  return `graphx.json "env": env file ${envFile} not found in the repository; continuing without it (set values as deployment secrets).`;
}
