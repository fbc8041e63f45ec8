/** How the control plane talks to the deployment and revision workflows: starts, signals, queries. */
import {
  isGrpcDeadlineError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import {
  deleteDeploymentSignal,
  deploymentWorkflowId,
  enqueueRevisionSignal,
  interruptSignal,
  retryRevisionUpdate,
  retrySignal,
  revisionWorkflowId,
  searchAttributeKeys,
  statusQuery,
  type EnqueueRevisionInput,
  type RevisionStatusView,
} from '../../workflows/messages';

export { searchAttributeKeys };

/** How long a GET waits for a workflow to answer before reading the database instead. */
const QUERY_DEADLINE_MS = 2000;

export type OutboxMessage =
  | {
      kind: 'enqueue_revision';
      deploymentId: string;
      payload: EnqueueRevisionInput & { tenantId: string; deploymentName: string };
    }
  | {
      kind: 'delete_deployment';
      deploymentId: string;
      payload: { tenantId: string; deploymentName: string; deleteTracingProject: boolean };
    };

/**
 * Signal-with-start on `deployment/<id>`: starts the entity workflow if it is not running (on `taskQueue`, the
 * installation's control queue), then signals it.
 */
export async function signalDeploymentWorkflow(temporal: Client, message: OutboxMessage, taskQueue: string): Promise<void> {
  const { tenantId, deploymentName } = message.payload;
  const common = {
    taskQueue,
    workflowId: deploymentWorkflowId(message.deploymentId),
    args: [{ deploymentId: message.deploymentId, tenantId, deploymentName }] as const,
    staticSummary: `deployment ${deploymentName}`,
    typedSearchAttributes: [
      { key: searchAttributeKeys.tenantId, value: tenantId },
      { key: searchAttributeKeys.deploymentId, value: message.deploymentId },
      { key: searchAttributeKeys.deploymentName, value: deploymentName },
    ],
  };
  if (message.kind === 'enqueue_revision') {
    const { revisionId, revisionNumber, repoRef } = message.payload;
    await temporal.workflow.signalWithStart('deploymentWorkflow', {
      ...common,
      args: [...common.args],
      signal: enqueueRevisionSignal,
      signalArgs: [{ revisionId, revisionNumber, repoRef }],
    });
  } else {
    await temporal.workflow.signalWithStart('deploymentWorkflow', {
      ...common,
      args: [...common.args],
      signal: deleteDeploymentSignal,
      signalArgs: [{ deleteTracingProject: message.payload.deleteTracingProject }],
    });
  }
}

/** Live status of a revision from its workflow; null when there is no workflow or no worker answers in time. */
export async function queryRevisionStatus(temporal: Client, revisionId: string): Promise<RevisionStatusView | null> {
  try {
    const handle = temporal.workflow.getHandle(revisionWorkflowId(revisionId));
    // A deadline on the call itself (not only on our wait): an abandoned query would keep retrying in the background.
    return await temporal.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(statusQuery));
  } catch {
    return null;
  }
}

export async function signalRevision(temporal: Client, revisionId: string, signal: 'retry' | 'interrupt'): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(revisionWorkflowId(revisionId)).signal(signal === 'retry' ? retrySignal : interruptSignal);
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** How long the API waits for a worker to accept or reject a retry before falling back to the signal. */
const RETRY_UPDATE_DEADLINE_MS = 10_000;

/** What became of a retry: accepted, refused by the workflow (with its reason), or no workflow waits any more. */
export type RetryOutcome = { kind: 'accepted' } | { kind: 'refused'; reason: string } | { kind: 'gone' };

/**
 * Retries a failed revision through the `retryRevision` update, whose validator refuses a revision that does not wait
 * for retry. When no worker answers in time the durable `retry` signal is sent instead (it is acted on once a worker
 * is back), so the API never hangs on a missing worker.
 */
export async function retryRevision(temporal: Client, revisionId: string): Promise<RetryOutcome> {
  const handle = temporal.workflow.getHandle(revisionWorkflowId(revisionId));
  try {
    await temporal.connection.withDeadline(Date.now() + RETRY_UPDATE_DEADLINE_MS, () =>
      handle.executeUpdate(retryRevisionUpdate),
    );
    return { kind: 'accepted' };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { kind: 'gone' };
    if (error instanceof WorkflowUpdateFailedError) {
      return { kind: 'refused', reason: (error.cause as Error | undefined)?.message ?? error.message };
    }
    if (!(error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) && !isGrpcDeadlineError(error)) throw error;
  }
  return (await signalRevision(temporal, revisionId, 'retry')) ? { kind: 'accepted' } : { kind: 'gone' };
}
