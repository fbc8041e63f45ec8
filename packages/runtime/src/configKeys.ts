/**
 * The keys of graphx.json, which takes the anchor's `langgraph.json` as it is: every documented key is accepted
 * (langgraph-cli's config schema and the anchor's reference); the ones this platform does not act on are named in a
 * warning, never a failure; a key nobody documents is a mistake (a typo, usually) and fails the build by name.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Keys that change what we build or serve. */
const HONOURED = ['graphs', 'env', 'auth', 'http', 'ui', 'ui_config', 'dependencies', 'node_version', '$schema', 'description'];

/** Documented `langgraph.json` keys that have no effect here (what happens instead is said in the warning). */
const IGNORED: Record<string, string> = {
  dockerfile_lines: 'apps run as processes, not images',
  base_image: 'apps run as processes, not images',
  image_distro: 'apps run as processes, not images',
  docker_compose_file: 'apps run as processes, not images',
  _INTERNAL_docker_tag: 'apps run as processes, not images',
  api_version: 'the platform serves its own agent-server API version',
  keep_pkg_tools: 'apps run as processes, not images',
  python_version: 'only JavaScript graphs are served',
  pip_config_file: 'only JavaScript graphs are served',
  pip_installer: 'only JavaScript graphs are served',
  store: 'the store has no semantic index here',
  checkpointer: 'threads are kept in the deployment database',
  keep_alive: 'streams send their own keep-alive comments',
  webhooks: 'webhook settings are not applied',
  encryption: 'secrets at rest use the platform key',
  middleware_order: 'custom middleware is not mounted',
  node_loader: 'graphs load through the platform loader',
};

export interface ConfigKeyReview {
  /** One sentence per documented key that has no effect here (and a node_version we do not run). */
  warnings: string[];
  /** Keys neither we nor the anchor document. */
  unknown: string[];
}

/** Sorts the top-level keys of a parsed graphx.json into honoured, ignored (warned) and unknown. */
export function reviewConfigKeys(config: Record<string, unknown>): ConfigKeyReview {
  const warnings: string[] = [];
  const unknown: string[] = [];
  for (const key of Object.keys(config)) {
    if (HONOURED.includes(key)) continue;
    const why = IGNORED[key];
    if (why) warnings.push(`graphx.json "${key}" is accepted but not supported here (${why}); it has no effect.`);
    else unknown.push(key);
  }
  const running = process.versions.node.split('.')[0];
  if (config.node_version !== undefined && String(config.node_version) !== running) {
    warnings.push(`graphx.json asks for node_version ${String(config.node_version)}; apps run on Node ${running} here.`);
  }
  return { warnings, unknown };
}

/** Every key graphx.json accepts (for messages). */
export function documentedKeys(): string[] {
  return [...HONOURED, ...Object.keys(IGNORED)].filter((key) => !key.startsWith('_') && key !== '$schema').sort();
}

/** The warning for an `env` file that is not there (the starters git-ignore `.env`), or null when it is. */
export function missingEnvFileWarning(config: Record<string, unknown>, appDir: string): string | null {
  if (typeof config.env !== 'string') return null;
  if (fs.existsSync(path.resolve(appDir, config.env))) return null;
  return `graphx.json "env": env file ${config.env} not found in the repository; continuing without it (set values as deployment secrets).`;
}
