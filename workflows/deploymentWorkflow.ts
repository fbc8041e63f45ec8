/**
 * The entity workflow of one deployment (`deployment/<id>`). It owns the revisions: serialises them (QUEUED), skips
 * superseded queued ones (SKIPPED), runs each as a child `revision/<id>`, and on delete tears everything down.
 * Handlers only record intent; the main loop acts on it, so every effect happens in one place and in order.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/types';
import {
  CONTROL_TASK_QUEUE,
  deleteDeploymentSignal,
  deploymentStateQuery,
  enqueueRevisionSignal,
  interruptQueuedRevisionSignal,
  interruptSignal,
  revisionWorkflowId,
  searchAttributeKeys,
  supersedeSignal,
  type DeploymentWorkflowInput,
  type DeploymentWorkflowState,
  type EnqueueRevisionInput,
  type RevisionStatus,
} from './messages';
import { revisionWorkflow } from './revisionWorkflow';

const SEEN_LIMIT = 500;

const { recordRevisionStatus, recordDeploymentStatus } = proxyLocalActivities<PipelineActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumInterval: '5 seconds' },
});
const { teardownDeployment } = proxyActivities<PipelineActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<void> {
  const state: DeploymentWorkflowState = input.state ?? {
    queuedRevisionIds: [],
    seenRevisionIds: [],
    runningRevisionId: null,
    activeRevisionId: null,
    deleteRequested: false,
  };
  const details = new Map<string, EnqueueRevisionInput>();
  const revisionStatuses: Record<string, RevisionStatus> = {};
  /** Arrived but not yet recorded as QUEUED. */
  const arrivals: EnqueueRevisionInput[] = [];
  let child: ChildWorkflowHandle<typeof revisionWorkflow> | null = null;
  let childOutcome: { revisionId: string; status: RevisionStatus } | null = null;
  let supersedeSent = false;

  setHandler(enqueueRevisionSignal, (revision) => {
    // The outbox delivers at least once: a revision already seen is ignored.
    if (state.seenRevisionIds.includes(revision.revisionId) || state.deleteRequested) return;
    state.seenRevisionIds.push(revision.revisionId);
    if (state.seenRevisionIds.length > SEEN_LIMIT) state.seenRevisionIds.splice(0, state.seenRevisionIds.length - SEEN_LIMIT);
    arrivals.push(revision);
  });
  setHandler(deleteDeploymentSignal, (request) => {
    state.deleteRequested = true;
    state.deleteTracingProject = Boolean(request?.deleteTracingProject);
  });
  const interruptedWhileQueued: string[] = [];
  setHandler(interruptQueuedRevisionSignal, ({ revisionId }) => {
    const queuedIndex = state.queuedRevisionIds.indexOf(revisionId);
    if (queuedIndex >= 0) state.queuedRevisionIds.splice(queuedIndex, 1);
    const arrivalIndex = arrivals.findIndex((revision) => revision.revisionId === revisionId);
    if (arrivalIndex >= 0) arrivals.splice(arrivalIndex, 1);
    if (queuedIndex >= 0 || arrivalIndex >= 0) interruptedWhileQueued.push(revisionId);
  });
  setHandler(deploymentStateQuery, () => ({ ...state, revisionStatuses: { ...revisionStatuses } }));

  const setRevisionStatus = async (revisionId: string, status: RevisionStatus, statusMessage: string | null = null) => {
    revisionStatuses[revisionId] = status;
    await recordRevisionStatus({ revisionId, status, statusMessage });
  };

  const startRevision = async (revisionId: string) => {
    const revision = details.get(revisionId);
    state.runningRevisionId = revisionId;
    supersedeSent = false;
    revisionStatuses[revisionId] = 'AWAITING_BUILD';
    child = await startChild(revisionWorkflow, {
      workflowId: revisionWorkflowId(revisionId),
      taskQueue: CONTROL_TASK_QUEUE,
      args: [
        {
          revisionId,
          revisionNumber: revision?.revisionNumber ?? 0,
          deploymentId: input.deploymentId,
          tenantId: input.tenantId,
          deploymentName: input.deploymentName,
          repoRef: revision?.repoRef ?? null,
        },
      ],
      // The revision keeps its own history: deleting the deployment interrupts it explicitly instead.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `build ${input.deploymentName} rev ${revision?.revisionNumber ?? '?'}${revision?.repoRef ? ` from ${revision.repoRef}` : ''}`,
      typedSearchAttributes: undefined,
      searchAttributes: {
        [searchAttributeKeys.tenantId.name]: [input.tenantId],
        [searchAttributeKeys.deploymentId.name]: [input.deploymentId],
        [searchAttributeKeys.deploymentName.name]: [input.deploymentName],
        [searchAttributeKeys.revisionId.name]: [revisionId],
        [searchAttributeKeys.revisionStatus.name]: ['AWAITING_BUILD'],
      },
    });
    const started = child;
    void started.result().then(
      (view) => (childOutcome = { revisionId, status: view.status }),
      () => (childOutcome = { revisionId, status: 'UNKNOWN' }),
    );
  };

  // After continueAsNew a revision may still be running as a child of the previous run: follow it by id.
  if (state.runningRevisionId) {
    const orphanId = state.runningRevisionId;
    state.queuedRevisionIds.unshift(orphanId);
    state.runningRevisionId = null;
  }

  for (;;) {
    await condition(
      () =>
        arrivals.length > 0 ||
        interruptedWhileQueued.length > 0 ||
        childOutcome !== null ||
        state.deleteRequested ||
        (state.runningRevisionId === null && state.queuedRevisionIds.length > 0) ||
        (state.runningRevisionId !== null && state.queuedRevisionIds.length > 0 && !supersedeSent) ||
        (state.runningRevisionId === null && workflowInfo().continueAsNewSuggested),
    );

    if (arrivals.length > 0) {
      for (const revision of arrivals.splice(0)) {
        details.set(revision.revisionId, revision);
        state.queuedRevisionIds.push(revision.revisionId);
        await setRevisionStatus(revision.revisionId, 'QUEUED');
      }
      continue;
    }

    if (interruptedWhileQueued.length > 0) {
      for (const revisionId of interruptedWhileQueued.splice(0)) {
        await setRevisionStatus(revisionId, 'INTERRUPTED', 'Interrupted by a user before it started.');
      }
      continue;
    }

    if (childOutcome) {
      const outcome: { revisionId: string; status: RevisionStatus } = childOutcome;
      childOutcome = null;
      child = null;
      state.runningRevisionId = null;
      revisionStatuses[outcome.revisionId] = outcome.status;
      if (outcome.status === 'DEPLOYED') state.activeRevisionId = outcome.revisionId;
      continue;
    }

    if (state.deleteRequested) {
      if (state.runningRevisionId) {
        await signalRevisionIfRunning(state.runningRevisionId, interruptSignal);
        await condition(() => childOutcome !== null);
        state.runningRevisionId = null;
      }
      for (const revisionId of state.queuedRevisionIds.splice(0)) {
        await setRevisionStatus(revisionId, 'SKIPPED', 'The deployment was deleted.');
      }
      await recordDeploymentStatus({ deploymentId: input.deploymentId, status: 'AWAITING_DELETE' });
      await teardownDeployment({ deploymentId: input.deploymentId, deleteTracingProject: Boolean(state.deleteTracingProject) });
      return;
    }

    if (state.runningRevisionId !== null && state.queuedRevisionIds.length > 0 && !supersedeSent) {
      // A newer revision waits: if the running one has failed and waits for retry, it stops waiting.
      supersedeSent = true;
      await signalRevisionIfRunning(state.runningRevisionId, supersedeSignal);
      continue;
    }

    if (state.runningRevisionId === null && state.queuedRevisionIds.length > 0) {
      const newest = state.queuedRevisionIds.pop() as string;
      for (const older of state.queuedRevisionIds.splice(0)) {
        await setRevisionStatus(older, 'SKIPPED', `Superseded by a newer revision (${newest}).`);
      }
      await startRevision(newest);
      continue;
    }

    if (state.runningRevisionId === null && workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof deploymentWorkflow>({ ...input, state });
    }
  }
}

/** Signals a revision workflow; one that has just completed (its result not yet seen here) is not an error. */
async function signalRevisionIfRunning(
  revisionId: string,
  signal: typeof interruptSignal | typeof supersedeSignal,
): Promise<void> {
  try {
    await getExternalWorkflowHandle(revisionWorkflowId(revisionId)).signal(signal);
  } catch {
    // The child finished between our decision and the signal: its outcome arrives through its result.
  }
}
