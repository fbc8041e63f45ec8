/**
 * Everything a step needs to know about one revision, read from the database (workflow inputs carry ids only, so
 * configuration and secrets never enter a workflow history). Shared by the activities and the local target, which
 * must rebuild an instance's environment on its own after a restart.
 */
import path from 'node:path';
import type { DbOrTx } from '../db/knex';
import type { SecretBox } from '../security/secretBox';

export interface DeploymentSecret {
  name: string;
  value: string;
}

export interface RevisionSpec {
  revisionId: string;
  deploymentId: string;
  tenantId: string;
  deploymentName: string;
  /** Path segment at the gateway (the name unless another tenant's live deployment holds it). */
  routeKey: string;
  status: string;
  /** `codehost`, `external_docker` or `internal_docker`. */
  source: string;
  sourceConfig: {
    repo_url?: string | null;
    integration_id?: string | null;
    install_command?: string | null;
    build_command?: string | null;
    resource_spec?: {
      min_scale?: number | null;
      cpu?: number | null;
      cpu_limit?: number | null;
      memory_mb?: number | null;
      memory_limit_mb?: number | null;
      /** Deployment secrets (by name) holding registry credentials for `image_uri`. */
      image_pull_secrets?: Array<{ name: string }> | null;
    } | null;
  };
  repoRef: string;
  /** `source_revision_config.image_uri`: the image an `external_docker`/`internal_docker` revision pulls. */
  imageUri: string | null;
  graphxConfigPath: string;
  repoCommitSha: string | null;
  secrets: DeploymentSecret[];
  /**
   * The image the revision runs, recorded by its build step: the pulled `image_uri` (image sources) or the built
   * revision image (`codehost` in container mode). Null before the build step and for process-mode builds.
   */
  image: { ref: string; digest: string | null } | null;
  /** The earlier revision a redeploy (rollback) copied; its image is reused when the engine still holds it. */
  redeployedFromRevisionId?: string | null;
}

/** True for revisions that run a user's image instead of building a repository. */
export function isImageSource(spec: Pick<RevisionSpec, 'source'>): boolean {
  return spec.source === 'external_docker' || spec.source === 'internal_docker';
}

/** Where a revision's build lives: `$dataDir/builds/<revision_id>/src` is the clone (docs/internal-contracts.md). */
export function buildPaths(dataDir: string, revisionId: string): { root: string; src: string } {
  const root = path.join(dataDir, 'builds', revisionId);
  return { root, src: path.join(root, 'src') };
}

/**
 * Absolute path of the revision's graphx.json, or null when `graphx_config_path` escapes the clone (a path such as
 * `../../secret-key` must not let a build read the data dir).
 */
export function graphxConfigFile(dataDir: string, spec: Pick<RevisionSpec, 'revisionId' | 'graphxConfigPath'>): string | null {
  const { src } = buildPaths(dataDir, spec.revisionId);
  const file = path.resolve(src, spec.graphxConfigPath);
  return file.startsWith(src + path.sep) ? file : null;
}

/** Decrypts `revisions.secrets_encrypted` (SecretBox of `[{name, value}]`). */
export function decryptSecrets(secretBox: SecretBox, encrypted: string | null): DeploymentSecret[] {
  if (!encrypted) return [];
  const parsed = JSON.parse(secretBox.decrypt(encrypted)) as DeploymentSecret[];
  return parsed.filter((secret) => typeof secret?.name === 'string' && typeof secret.value === 'string');
}

/** Thrown when the revision (or its deployment) is not in the database. */
export class RevisionNotFoundError extends Error {
  override name = 'RevisionNotFoundError';
}

/** Reads the revision and its deployment; secrets decrypted. */
export async function loadRevisionSpec(db: DbOrTx, secretBox: SecretBox, revisionId: string): Promise<RevisionSpec> {
  const row = await db('revisions as r')
    .join('deployments as d', 'd.id', 'r.deployment_id')
    .where('r.id', revisionId)
    .first(
      'r.id',
      'r.deployment_id',
      'r.tenant_id',
      'r.status',
      'r.source_config',
      'r.source_revision_config',
      'r.secrets_encrypted',
      'r.repo_commit_sha',
      'r.image_ref',
      'r.image_digest',
      'r.redeployed_from_revision_id',
      'r.source',
      'd.name as deployment_name',
      'd.route_key',
    );
  if (!row) throw new RevisionNotFoundError(`Revision ID ${revisionId} not found.`);
  const revisionConfig = (row.source_revision_config ?? {}) as {
    repo_ref?: string | null;
    graphx_config_path?: string | null;
    image_uri?: string | null;
  };
  return {
    revisionId: row.id,
    deploymentId: row.deployment_id,
    tenantId: row.tenant_id,
    deploymentName: row.deployment_name,
    routeKey: row.route_key ?? row.deployment_name,
    status: row.status,
    source: row.source,
    sourceConfig: row.source_config ?? {},
    repoRef: revisionConfig.repo_ref || 'main',
    graphxConfigPath: revisionConfig.graphx_config_path || 'graphx.json',
    imageUri: revisionConfig.image_uri ?? null,
    repoCommitSha: row.repo_commit_sha,
    secrets: decryptSecrets(secretBox, row.secrets_encrypted),
    image: row.image_ref ? { ref: row.image_ref, digest: row.image_digest ?? null } : null,
    redeployedFromRevisionId: row.redeployed_from_revision_id ?? null,
  };
}

/** `resource_spec.min_scale` (default 1). */
export function minScale(spec: RevisionSpec): number {
  const value = spec.sourceConfig.resource_spec?.min_scale;
  return typeof value === 'number' && value >= 1 ? Math.floor(value) : 1;
}
