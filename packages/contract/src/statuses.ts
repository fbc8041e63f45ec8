/**
 * The status vocabulary every part speaks: revision and deployment statuses, their groups, the pipeline steps and the
 * failure types a user must fix. Workflows import it too (the workflow fence allows this package by name): keep it
 * free of Node and I/O.
 */
export const REVISION_STATUSES = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
  'DEPLOYED',
  'CREATE_FAILED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'SKIPPED',
  'INTERRUPTED',
  'UNKNOWN',
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** Status groups, spelled once. Final: a revision never leaves these once there (database writes are guarded). */
export const FINAL_REVISION_STATUSES: readonly RevisionStatus[] = ['DEPLOYED', 'SKIPPED', 'INTERRUPTED'];
/** Ended without becoming DEPLOYED and will not move again on its own: DEPLOYED and SKIPPED/INTERRUPTED too. */
export const SETTLED_REVISION_STATUSES: readonly RevisionStatus[] = [...FINAL_REVISION_STATUSES, 'CREATE_FAILED', 'UNKNOWN'];
/** Still on its way through the pipeline (or waiting for it). */
export const IN_PROGRESS_REVISION_STATUSES: readonly RevisionStatus[] = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
];
/** Failed at a step; waits for `retry` (or a newer revision). */
export const FAILED_REVISION_STATUSES: readonly RevisionStatus[] = ['BUILD_FAILED', 'DEPLOY_FAILED'];
/** Still in the deployment's queue: no revision workflow of its own yet. */
export const NOT_STARTED_REVISION_STATUSES: readonly RevisionStatus[] = ['CREATING', 'QUEUED'];
/** True for the statuses that wait for `retry`. */
export const isFailedRevisionStatus = (status: RevisionStatus): boolean => FAILED_REVISION_STATUSES.includes(status);

/** Activity failures the user must fix: never retried; the workflow turns them into *_FAILED with their message. */
export const NON_RETRYABLE_ERROR_TYPES: readonly string[] = [
  'RepoNotFound',
  'CloneFailed',
  'BuildFailed',
  'ConfigInvalid',
  'DeployFailed',
];

export const DEPLOYMENT_STATUSES = ['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** The pipeline steps, in order; a failed revision resumes from the step that failed. */
export const PIPELINE_STEPS = ['clone', 'build', 'database', 'rollout'] as const;
export type PipelineStep = (typeof PIPELINE_STEPS)[number];
