/**
 * The activity interface the workflows call. Inputs carry ids only: configuration, secrets and tokens are read from
 * the database inside the activity, so they never enter a workflow history.
 */
import type { DeploymentStatus, PipelineStep, RevisionStatus } from '@graphx/contract/statuses';

export interface RecordRevisionStatusInput {
  revisionId: string;
  status: RevisionStatus;
  statusMessage?: string | null;
  failedStep?: PipelineStep | null;
  repoCommitSha?: string | null;
  /** With DEPLOYED: the URL the rollout returned (the deployment's `url`). */
  url?: string | null;
}

export interface RevisionRef {
  revisionId: string;
  deploymentId: string;
}

export interface CloneResult {
  /** Null for revisions that run a user's image (nothing is cloned). */
  repoCommitSha: string | null;
}

export interface RolloutResult {
  url: string;
}

export interface PipelineActivities {
  /** Writes the revision's status (and message) to the database: the fallback when no worker answers queries. */
  recordRevisionStatus(input: RecordRevisionStatusInput): Promise<void>;
  /** Writes the deployment's status. */
  recordDeploymentStatus(input: { deploymentId: string; status: DeploymentStatus }): Promise<void>;
  /** Clones the revision's repository at its ref into the build dir (graphx-build queue). */
  cloneRepository(input: RevisionRef): Promise<CloneResult>;
  /** Runs the install and build commands in a clean environment (graphx-build queue). */
  buildApplication(input: RevisionRef): Promise<void>;
  /** Creates the deployment's database and role once; sets the deployment READY. */
  provisionDatabase(input: { deploymentId: string }): Promise<void>;
  /** Starts the revision's instances, waits for /ok, switches the gateway, drains and stops the old ones. */
  rolloutRevision(input: RevisionRef): Promise<RolloutResult>;
  /** Stops every instance, drops the database and role, marks the deployment deleted. */
  teardownDeployment(input: { deploymentId: string; deleteTracingProject?: boolean }): Promise<void>;
}
