/**
 * Every signal, query and update of the workflows, the task-queue names, workflow ids, search attributes and the
 * inputs they carry. Imported by workflow code, the API and the worker alike: keep it free of Node and I/O.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const CONTROL_TASK_QUEUE = 'graphx-control';
export const BUILD_TASK_QUEUE = 'graphx-build';

export const SEARCH_ATTRIBUTE_NAMES = [
  'GraphxTenantId',
  'GraphxDeploymentId',
  'GraphxDeploymentName',
  'GraphxRevisionId',
  'GraphxRevisionStatus',
] as const;

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

export const DEPLOYMENT_STATUSES = ['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** The pipeline steps, in order; a failed revision resumes from the step that failed. */
export const PIPELINE_STEPS = ['clone', 'build', 'database', 'rollout'] as const;
export type PipelineStep = (typeof PIPELINE_STEPS)[number];

export const deploymentWorkflowId = (deploymentId: string) => `deployment/${deploymentId}`;
export const revisionWorkflowId = (revisionId: string) => `revision/${revisionId}`;

export interface DeploymentWorkflowInput {
  deploymentId: string;
  tenantId: string;
  deploymentName: string;
  /** Carried over by continueAsNew. */
  state?: DeploymentWorkflowState;
}

export interface DeploymentWorkflowState {
  /** Revisions waiting, oldest first. */
  queuedRevisionIds: string[];
  /** Every revision id ever enqueued (dedupes re-delivered outbox signals). Bounded by continueAsNew. */
  seenRevisionIds: string[];
  runningRevisionId: string | null;
  activeRevisionId: string | null;
  deleteRequested: boolean;
  deleteTracingProject?: boolean;
}

export interface EnqueueRevisionInput {
  revisionId: string;
  revisionNumber: number;
  /** For the summary shown in the Temporal UI ("build my-app rev 3 from main"). */
  repoRef: string | null;
}

export interface RevisionWorkflowInput {
  revisionId: string;
  revisionNumber: number;
  deploymentId: string;
  tenantId: string;
  deploymentName: string;
  repoRef: string | null;
}

export interface DeleteDeploymentInput {
  /** `?delete_tracing_project=true`: the tracing project goes too. */
  deleteTracingProject: boolean;
}

/** What the `status` query of a revision workflow answers. */
export interface RevisionStatusView {
  revisionId: string;
  status: RevisionStatus;
  statusMessage: string | null;
  failedStep: PipelineStep | null;
  repoCommitSha: string | null;
}

/** What the `deploymentState` query answers. */
export interface DeploymentStateView extends DeploymentWorkflowState {
  revisionStatuses: Record<string, RevisionStatus>;
}

/** Sent by the outbox relay: a new revision to build. Idempotent per revisionId. */
export const enqueueRevisionSignal = defineSignal<[EnqueueRevisionInput]>('enqueueRevision');
/** Sent by the outbox relay: stop everything, drop the database, end. */
export const deleteDeploymentSignal = defineSignal<[DeleteDeploymentInput]>('deleteDeployment');
/** Interrupts a revision that is still waiting in the queue (it has no workflow of its own yet). */
export const interruptQueuedRevisionSignal = defineSignal<[{ revisionId: string }]>('interruptQueuedRevision');
export const deploymentStateQuery = defineQuery<DeploymentStateView>('deploymentState');

/** Operator signals of a revision workflow (Temporal UI / CLI, or the API's retry and interrupt). */
export const retrySignal = defineSignal<[]>('retry');
export const interruptSignal = defineSignal<[]>('interrupt');
export const statusQuery = defineQuery<RevisionStatusView>('status');
/** From the deployment workflow: a newer revision is waiting, so a failed one stops waiting for `retry`. */
export const supersedeSignal = defineSignal<[]>('supersede');
