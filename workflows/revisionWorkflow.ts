/**
 * The pipeline of one revision: clone → build → database → rollout. A failure leaves the revision *_FAILED and
 * waiting (up to 7 days) for the `retry` signal, which resumes from the failed step; `interrupt` cancels whatever
 * runs (the build process is killed by the activity's cancellation) and ends INTERRUPTED.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setCurrentDetails,
  upsertSearchAttributes,
  ActivityFailure,
  ActivityCancellationType,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/types';
import {
  BUILD_TASK_QUEUE,
  interruptSignal,
  retryRevisionUpdate,
  retrySignal,
  statusQuery,
  supersedeSignal,
  type RevisionStatusView,
  type RevisionWorkflowInput,
  searchAttributeKeys,
} from './messages';
import {
  PIPELINE_STEPS,
  type PipelineStep,
  type RevisionStatus,
  isFailedRevisionStatus,
  NON_RETRYABLE_ERROR_TYPES,
} from '@graphx/contract/statuses';

const RETRY_WAIT = '7 days';
const RETRY_WAIT_MS = 7 * 24 * 3600 * 1000;

const { recordRevisionStatus } = proxyLocalActivities<PipelineActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumInterval: '5 seconds' },
});
const buildQueue = proxyActivities<PipelineActivities>({
  taskQueue: BUILD_TASK_QUEUE,
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  // Interrupt is recorded only once the activity has stopped (its build process killed), never before.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES],
  },
});
const controlQueue = proxyActivities<PipelineActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  // Interrupt is recorded only once the activity has stopped (its build process killed), never before.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES],
  },
});

/** Status shown while a step runs, and the failure status a step's error leads to. */
const STEP_STATUS: Record<PipelineStep, { running: RevisionStatus; failed: RevisionStatus }> = {
  clone: { running: 'BUILDING', failed: 'BUILD_FAILED' },
  build: { running: 'BUILDING', failed: 'BUILD_FAILED' },
  database: { running: 'AWAITING_DEPLOY', failed: 'DEPLOY_FAILED' },
  rollout: { running: 'DEPLOYING', failed: 'DEPLOY_FAILED' },
};

export async function revisionWorkflow(input: RevisionWorkflowInput): Promise<RevisionStatusView> {
  const view: RevisionStatusView = {
    revisionId: input.revisionId,
    status: 'AWAITING_BUILD',
    statusMessage: null,
    failedStep: null,
    repoCommitSha: null,
  };
  let retryRequested = false;
  let interruptRequested = false;
  let superseded = false;
  let scope: CancellationScope | null = null;
  // What the rollout returned; recorded with DEPLOYED so the URL and the status are written together.
  let url: string | null = null;

  // True only while the revision waits for retry: a failed status alone is not enough (it may be ending).
  let waitingForRetry = false;

  setHandler(statusQuery, () => ({ ...view }));
  setHandler(retrySignal, () => {
    // Retry only means something to a failed revision; a retry sent while it runs is ignored, not queued. A signal
    // cannot answer, so the refusal goes to the workflow log (worker output) for whoever sent it.
    if (waitingForRetry) retryRequested = true;
    else log.warn('retry signal ignored', { revisionId: input.revisionId, reason: cannotRetry() });
  });
  const cannotRetry = (): string | null => {
    if (interruptRequested) return `Revision ${input.revisionId} is being interrupted; it cannot be retried.`;
    if (superseded) return `Revision ${input.revisionId} was replaced by a newer revision; it cannot be retried.`;
    if (!waitingForRetry || !isFailedRevisionStatus(view.status)) {
      return `Revision ${input.revisionId} is ${view.status}; only a BUILD_FAILED or DEPLOY_FAILED revision can be retried.`;
    }
    return null;
  };
  setHandler(
    retryRevisionUpdate,
    () => {
      retryRequested = true;
      return { revisionId: input.revisionId, resumesAt: view.failedStep ?? 'clone' };
    },
    {
      // A rejected update leaves no trace in the history: the caller gets the reason, the workflow is untouched.
      validator: () => {
        const reason = cannotRetry();
        if (reason) throw new Error(reason);
      },
    },
  );
  setHandler(interruptSignal, () => {
    interruptRequested = true;
    scope?.cancel();
  });
  setHandler(supersedeSignal, () => {
    superseded = true;
  });

  const setStatus = async (
    status: RevisionStatus,
    statusMessage: string | null = null,
    failedStep: PipelineStep | null = null,
  ) => {
    view.status = status;
    view.statusMessage = statusMessage;
    view.failedStep = failedStep;
    upsertSearchAttributes([{ key: searchAttributeKeys.revisionStatus, value: status }]);
    // Not cancellable: the database must learn the final status even while the scope is being cancelled.
    await CancellationScope.nonCancellable(() =>
      recordRevisionStatus({
        revisionId: input.revisionId,
        status,
        statusMessage,
        failedStep,
        repoCommitSha: view.repoCommitSha,
        ...(status === 'DEPLOYED' && url ? { url } : {}),
      }),
    );
  };

  const ref = { revisionId: input.revisionId, deploymentId: input.deploymentId };
  const runStep = async (step: PipelineStep) => {
    switch (step) {
      case 'clone':
        view.repoCommitSha = (await buildQueue.cloneRepository(ref)).repoCommitSha;
        return;
      case 'build':
        await buildQueue.buildApplication(ref);
        return;
      case 'database':
        await controlQueue.provisionDatabase({ deploymentId: input.deploymentId });
        return;
      case 'rollout':
        url = (await controlQueue.rolloutRevision(ref)).url;
        return;
    }
  };

  await setStatus('AWAITING_BUILD');
  let nextStep = 0;
  while (nextStep < PIPELINE_STEPS.length) {
    const step = PIPELINE_STEPS[nextStep] as PipelineStep;
    try {
      if (interruptRequested) throw new CancelledByInterrupt();
      if (view.status !== STEP_STATUS[step].running) await setStatus(STEP_STATUS[step].running);
      scope = new CancellationScope();
      await scope.run(() => runStep(step));
      scope = null;
      nextStep += 1;
      if (step === 'build') await setStatus('AWAITING_DEPLOY');
    } catch (error) {
      scope = null;
      if (interruptRequested || isCancellation(error) || error instanceof CancelledByInterrupt) {
        await setStatus('INTERRUPTED', 'Interrupted by a user.');
        return { ...view };
      }
      await setStatus(STEP_STATUS[step].failed, failureMessage(error, step), step);
      retryRequested = false;
      waitingForRetry = true;
      setCurrentDetails(retryDetails(input, view, new Date(Date.now() + RETRY_WAIT_MS)));
      const resumed = await condition(() => retryRequested || interruptRequested || superseded, RETRY_WAIT);
      waitingForRetry = false;
      setCurrentDetails('');
      if (!resumed || superseded) return { ...view };
      if (interruptRequested) {
        await setStatus('INTERRUPTED', 'Interrupted by a user.');
        return { ...view };
      }
      // Retry: resume from the step that failed.
    }
  }
  await setStatus('DEPLOYED');
  return { ...view };
}

class CancelledByInterrupt extends Error {}

/**
 * What the Temporal UI shows as the current details (Markdown) while a failed revision waits: what failed, how to
 * retry it (API, the update or the signal), and until when. Date.now() is workflow time here: deterministic.
 */
function retryDetails(input: RevisionWorkflowInput, view: RevisionStatusView, until: Date): string {
  const workflowId = `revision/${input.revisionId}`;
  return [
    `**${view.status}** at the **${view.failedStep}** step of ${input.deploymentName} revision ${input.revisionNumber}.`,
    '',
    `> ${(view.statusMessage ?? '').split('\n').slice(0, 5).join('\n> ')}`,
    '',
    `Waiting for a retry until **${until.toISOString()}** (then it ends ${view.status}; a newer revision ends the wait).`,
    'Retry from the failed step with any of:',
    `- API: \`POST /v2/deployments/${input.deploymentId}/revisions/${input.revisionId}/retry\``,
    `- update: \`temporal workflow update execute --workflow-id ${workflowId} --name retryRevision\``,
    `- signal: \`temporal workflow signal --workflow-id ${workflowId} --name retry\``,
  ].join('\n');
}

/** The sentence a user sees: the activity's own message (the failing command and its last lines), not a wrapper. */
function failureMessage(error: unknown, step: PipelineStep): string {
  let cause: unknown = error;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure || cause instanceof Error) {
    return cause.message || `The ${step} step failed.`;
  }
  return `The ${step} step failed.`;
}
