/** Response shapes of deployments and revisions (snake_case, secrets masked). */
import type { DeploymentRecord, LatestRevisionSummary } from '../db/repositories/deployments';
import type { RevisionRecord } from '../db/repositories/revisions';
import { MASKED_SECRET, type Secret } from './schemas';

const DAY_MS = 24 * 60 * 60 * 1000;

export function maskSecrets(secrets: Secret[]): Array<{ name: string; value: string }> {
  return secrets.map((secret) => ({ name: secret.name, value: MASKED_SECRET }));
}

/** READY but nothing served a run for `unusedAfterDays` reads as UNUSED. */
export function effectiveDeploymentStatus(deployment: DeploymentRecord, unusedAfterDays: number, now = Date.now()): string {
  if (deployment.status !== 'READY' || !deployment.activeRevisionId) return deployment.status;
  const lastActivity = (deployment.lastRunAt ?? deployment.updatedAt).getTime();
  return now - lastActivity > unusedAfterDays * DAY_MS ? 'UNUSED' : 'READY';
}

/**
 * Until when effectiveDeploymentStatus of this row stays what it is `now` by the passing of time alone: a READY
 * deployment turns UNUSED once idle for `unusedAfterDays`; every other status only changes with the row.
 */
export function effectiveStatusKeptUntil(deployment: DeploymentRecord, unusedAfterDays: number, now = Date.now()): number {
  if (deployment.status !== 'READY' || !deployment.activeRevisionId) return Infinity;
  const turnsUnused = (deployment.lastRunAt ?? deployment.updatedAt).getTime() + unusedAfterDays * DAY_MS;
  return now > turnsUnused ? Infinity : turnsUnused + 1;
}

export function deploymentView(
  deployment: DeploymentRecord,
  latest: LatestRevisionSummary | null,
  secrets: Secret[],
  unusedAfterDays: number,
): Record<string, unknown> {
  return {
    id: deployment.id,
    tenant_id: deployment.tenantId,
    name: deployment.name,
    source: deployment.source,
    source_config: { ...emptySourceConfig(), ...deployment.sourceConfig, custom_url: customUrl(deployment) },
    source_revision_config: revisionConfigView(latest),
    secrets: maskSecrets(secrets),
    status: effectiveDeploymentStatus(deployment, unusedAfterDays),
    latest_revision_id: deployment.latestRevisionId,
    active_revision_id: deployment.activeRevisionId,
    image_version: deployment.imageVersion,
    url: deployment.url,
    tracing_project_id: deployment.tracingProjectId,
    created_at: deployment.createdAt.toISOString(),
    updated_at: deployment.updatedAt.toISOString(),
  };
}

export function revisionView(revision: RevisionRecord, secrets: Secret[]): Record<string, unknown> {
  return {
    id: revision.id,
    deployment_id: revision.deploymentId,
    number: revision.number,
    status: revision.status,
    status_message: revision.statusMessage,
    source: revision.source,
    source_config: { ...emptySourceConfig(), ...revision.sourceConfig },
    source_revision_config: revisionConfigView(revision),
    secrets: maskSecrets(secrets),
    redeployed_from_revision_id: revision.redeployedFromRevisionId,
    created_at: revision.createdAt.toISOString(),
    updated_at: revision.updatedAt.toISOString(),
  };
}

/** The address the user gave (routed by host), else for `codehost` the gateway URL the server fills in. */
function customUrl(deployment: DeploymentRecord): string | null {
  return deployment.sourceConfig.custom_url ?? (deployment.source === 'codehost' ? deployment.url : null);
}

function revisionConfigView(
  revision: Pick<RevisionRecord, 'sourceRevisionConfig' | 'repoCommitSha' | 'imageRef' | 'imageDigest'> | null,
): Record<string, unknown> {
  const config = revision?.sourceRevisionConfig ?? {};
  return {
    repo_ref: config.repo_ref ?? null,
    graphx_config_path: config.graphx_config_path ?? null,
    image_uri: config.image_uri ?? null,
    repo_commit_sha: revision?.repoCommitSha ?? null,
    // The image the revision runs, once built or pulled (container runner; image sources).
    image_ref: revision?.imageRef ?? null,
    image_digest: revision?.imageDigest ?? null,
  };
}

function emptySourceConfig(): Record<string, unknown> {
  return {
    integration_id: null,
    repo_url: null,
    build_on_push: false,
    custom_url: null,
    resource_spec: null,
    listener_id: null,
    listener_config: null,
    install_command: null,
    build_command: null,
  };
}
