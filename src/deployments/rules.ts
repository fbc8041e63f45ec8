/**
 * The rules of CONTRACT §2.2 that a schema cannot express: which sources this mode accepts, repository URLs, reserved
 * secret names, immutable fields. Each failure is an InputError (400) with a sentence the user can act on.
 */
import type { GraphxConfig } from '../config';
import { InputError } from '@graphx/kit/errors';
import {
  MASKED_SECRET,
  type DeploymentSource,
  type PatchDeploymentRequest,
  type Secret,
  type SourceConfig,
  type SourceRevisionConfig,
} from './schemas';

const SOURCES_BY_MODE: Record<GraphxConfig['deploymentMode'], DeploymentSource[]> = {
  cloud: ['codehost', 'internal_docker'],
  self_hosted: ['external_docker'],
};

const RESERVED_SECRET_NAMES = new Set(['PORT', 'DATABASE_URI', 'DATABASE_URL', 'PATH', 'HOME', 'NODE_OPTIONS']);

export function assertSourceAllowed(config: GraphxConfig, source: DeploymentSource): void {
  const allowed = SOURCES_BY_MODE[config.deploymentMode];
  if (!allowed.includes(source)) {
    throw new InputError(
      `Source '${source}' is not available in ${config.deploymentMode} mode (GRAPHX_DEPLOYMENT_MODE); use one of: ${allowed.join(', ')}.`,
    );
  }
}

/** Accepts https://… always; file://, http://127.0.0.1… and http://localhost… only with GRAPHX_ALLOW_FILE_REPOS=1. */
export function assertRepoUrlAllowed(config: GraphxConfig, repoUrl: string): void {
  let url: URL;
  try {
    url = new URL(repoUrl);
  } catch {
    throw new InputError(`source_config.repo_url '${repoUrl}' is not a URL.`);
  }
  if (url.username || url.password) {
    throw new InputError(
      'source_config.repo_url must not embed credentials; use source_config.integration_id for private repositories.',
    );
  }
  if (url.protocol === 'https:') return;
  const local = url.protocol === 'file:' || (url.protocol === 'http:' && ['127.0.0.1', 'localhost'].includes(url.hostname));
  if (local && config.allowFileRepos) return;
  throw new InputError(
    local
      ? `source_config.repo_url '${repoUrl}' is a local repository, allowed only with GRAPHX_ALLOW_FILE_REPOS=1.`
      : `source_config.repo_url must be an https:// URL, got '${repoUrl}'.`,
  );
}

export function assertSecretsAllowed(secrets: Secret[]): void {
  const seen = new Set<string>();
  for (const secret of secrets) {
    if (RESERVED_SECRET_NAMES.has(secret.name) || secret.name.startsWith('GRAPHX_')) {
      throw new InputError(`Secret name '${secret.name}' is reserved; choose another name.`);
    }
    if (seen.has(secret.name)) throw new InputError(`Secret '${secret.name}' is given more than once.`);
    seen.add(secret.name);
  }
}

/** Per-source requirements of a create request; returns the source_revision_config with defaults filled in. */
export function checkSourceConfiguration(
  config: GraphxConfig,
  source: DeploymentSource,
  sourceConfig: SourceConfig,
  revisionConfig: SourceRevisionConfig,
): SourceRevisionConfig {
  if (source === 'codehost') {
    if (!sourceConfig.repo_url) throw new InputError("source_config.repo_url is required for a 'codehost' deployment.");
    assertRepoUrlAllowed(config, sourceConfig.repo_url);
    if (revisionConfig.image_uri)
      throw new InputError("source_revision_config.image_uri must be null for a 'codehost' deployment.");
    return {
      repo_ref: revisionConfig.repo_ref ?? 'main',
      graphx_config_path: revisionConfig.graphx_config_path ?? 'graphx.json',
      image_uri: null,
    };
  }
  if (!revisionConfig.image_uri)
    throw new InputError(`source_revision_config.image_uri is required for a '${source}' deployment.`);
  if (sourceConfig.repo_url || sourceConfig.integration_id) {
    throw new InputError(`source_config.repo_url and integration_id are only for 'codehost' deployments, not '${source}'.`);
  }
  return { repo_ref: null, graphx_config_path: null, image_uri: revisionConfig.image_uri };
}

const IMMUTABLE_SOURCE_CONFIG: Array<[string, (c: SourceConfig) => unknown]> = [
  ['source_config.repo_url', (c) => c.repo_url],
  ['source_config.integration_id', (c) => c.integration_id],
  ['source_config.listener_id', (c) => c.listener_id],
  ['source_config.listener_config.k8s_namespace', (c) => c.listener_config?.k8s_namespace],
];

/** A PATCH may repeat an immutable value but not change it. */
export function assertImmutableUnchanged(current: SourceConfig, patch: SourceConfig): void {
  for (const [field, read] of IMMUTABLE_SOURCE_CONFIG) {
    const next = read(patch);
    if (next !== undefined && next !== null && next !== (read(current) ?? null)) {
      throw new InputError(`Field '${field}' cannot be changed after creation.`);
    }
  }
}

/** Replaces the secrets; a value of `********` keeps the stored value of that name. */
export function mergeSecrets(stored: Secret[], incoming: Secret[]): Secret[] {
  return incoming.map((secret) => {
    if (secret.value !== MASKED_SECRET) return secret;
    const kept = stored.find((candidate) => candidate.name === secret.name);
    if (!kept) throw new InputError(`Secret '${secret.name}' has no stored value to keep; send its value.`);
    return kept;
  });
}

/**
 * A custom_url as stored: null, or an http(s) URL whose host is a host of its own (the gateway routes requests for it
 * to the deployment), never a loopback name or the gateway's public host, which route by path.
 * @throws InputError naming the URL.
 */
export function checkCustomUrl(config: GraphxConfig, url: string | null | undefined): string | null {
  if (!url) return null;
  const host = new URL(url).hostname.toLowerCase();
  const gatewayHost = config.gatewayPublicUrl ? new URL(config.gatewayPublicUrl).hostname.toLowerCase() : null;
  if (/^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$/.test(host) || host === gatewayHost) {
    throw new InputError(
      `custom_url ${url} must name a host of its own: the gateway's own address (${gatewayHost ?? 'loopback'}) routes by path.`,
    );
  }
  return url;
}

/**
 * A deployment's source config after a PATCH. `name` and `source` and the immutable fields stay as they are (an
 * InputError when the patch changes them); null means "not given" (clients echo GET bodies); resource_spec replaces as
 * a whole; custom_url is checked like at creation.
 */
export function patchedSourceConfig(
  config: GraphxConfig,
  deployment: { name: string; source: string; sourceConfig: SourceConfig; url: string | null },
  request: PatchDeploymentRequest,
): SourceConfig {
  for (const field of ['name', 'source'] as const) {
    const value = request[field];
    if (value !== undefined && value !== null && value !== deployment[field]) {
      throw new InputError(`Field '${field}' cannot be changed after creation.`);
    }
  }
  const patchConfig = request.source_config ?? {};
  assertImmutableUnchanged(deployment.sourceConfig, patchConfig);
  const sourceConfig: SourceConfig = { ...deployment.sourceConfig };
  for (const [key, value] of Object.entries(patchConfig)) {
    if (value !== null && value !== undefined && key !== 'custom_url') (sourceConfig as Record<string, unknown>)[key] = value;
  }
  // A GET body echoed back carries the gateway URL the server shows as custom_url: that is no change.
  if (patchConfig.custom_url && patchConfig.custom_url !== deployment.url) {
    sourceConfig.custom_url = checkCustomUrl(config, patchConfig.custom_url);
  }
  return sourceConfig;
}

/** True when a PATCH changes what runs, so it needs a new revision (`revisionPatch`: its revision fields given). */
export function patchNeedsRevision(
  request: PatchDeploymentRequest,
  revisionPatch: SourceRevisionConfig,
  before: SourceConfig,
  after: SourceConfig,
): boolean {
  // What is built changes with the install and build commands: a fixed command must build again (CONTRACT §2.2).
  const buildChanged = (['install_command', 'build_command'] as const).some(
    (field) => (after[field] ?? null) !== (before[field] ?? null),
  );
  return (
    Object.keys(revisionPatch).length > 0 ||
    (request.secrets !== undefined && request.secrets !== null) ||
    Boolean(request.source_config?.resource_spec) ||
    buildChanged
  );
}
