/**
 * Every signal, query and update of the workflows, the task-queue names, workflow ids, search attributes and the
 * inputs they carry (the status vocabulary is the contract package's). Imported by workflow code, the API and the
 * worker alike: keep it free of Node and I/O.
 */
// @temporalio/common is what @temporalio/workflow is built on: deterministic, no I/O.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PipelineStep, RevisionStatus } from '@graphx/contract/statuses';

/** The default prefix of the task queues (GRAPHX_TASK_QUEUE_PREFIX): `graphx-control` and `graphx-build`. */
export const DEFAULT_TASK_QUEUE_PREFIX = 'graphx';

export interface TaskQueues {
  /** Workflows and the light activities (database, rollout, status). */
  control: string;
  /** Clone and build. */
  build: string;
}

/**
 * The two task queues of one installation. Installations sharing a Temporal namespace (a staging and a production
 * control plane, the stacks of one test run) each take their own prefix, so no worker ever takes another's tasks:
 * a foreign worker has another database and secret key.
 */
export function taskQueues(prefix: string = DEFAULT_TASK_QUEUE_PREFIX): TaskQueues {
  return { control: `${prefix}-control`, build: `${prefix}-build` };
}

/** The build queue of the installation whose control queue is `controlQueue` (how a workflow finds it: its own). */
export function buildQueueOf(controlQueue: string): string {
  return `${controlQueue.replace(/-control$/, '')}-build`;
}

/** Typed search-attribute keys: the client starts workflows with them, workflows upsert by their `name`. */
export const searchAttributeKeys = {
  tenantId: defineSearchAttributeKey('GraphxTenantId', SearchAttributeType.KEYWORD),
  deploymentId: defineSearchAttributeKey('GraphxDeploymentId', SearchAttributeType.KEYWORD),
  deploymentName: defineSearchAttributeKey('GraphxDeploymentName', SearchAttributeType.KEYWORD),
  revisionId: defineSearchAttributeKey('GraphxRevisionId', SearchAttributeType.KEYWORD),
  revisionStatus: defineSearchAttributeKey('GraphxRevisionStatus', SearchAttributeType.KEYWORD),
} as const;

/** What the dev server registers (every key above, as Keyword). */
export const SEARCH_ATTRIBUTE_NAMES = Object.values(searchAttributeKeys).map((key) => key.name);

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
/** What an accepted `retryRevision` update answers. */
export interface RetryRevisionResult {
  revisionId: string;
  /** The step the pipeline resumes from. */
  resumesAt: PipelineStep;
}
/**
 * The `retry` signal as an update: its validator rejects a revision that is not failed and waiting for retry, so the
 * caller (the API, the Temporal UI or CLI) is told instead of the request vanishing. The signal stays for
 * compatibility with running workflows and scripts.
 */
export const retryRevisionUpdate = defineUpdate<RetryRevisionResult, []>('retryRevision');
export const interruptSignal = defineSignal<[]>('interrupt');
export const statusQuery = defineQuery<RevisionStatusView>('status');
/** From the deployment workflow: a newer revision is waiting, so a failed one stops waiting for `retry`. */
export const supersedeSignal = defineSignal<[]>('supersede');
