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
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  ActivityFailure,
  ActivityCancellationType,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/types';
import {
  BUILD_TASK_QUEUE,
  interruptSignal,
  PIPELINE_STEPS,
  retrySignal,
  statusQuery,
  supersedeSignal,
  type PipelineStep,
  type RevisionStatus,
  type RevisionStatusView,
  type RevisionWorkflowInput,
  isFailedRevisionStatus,
  NON_RETRYABLE_ERROR_TYPES,
  searchAttributeKeys,
} from './messages';

const RETRY_WAIT = '7 days';

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

  setHandler(statusQuery, () => ({ ...view }));
  setHandler(retrySignal, () => {
    // Retry only means something to a failed revision; a retry sent while it runs is ignored, not queued.
    if (isFailedRevisionStatus(view.status)) retryRequested = true;
  });
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
    upsertSearchAttributes({ [searchAttributeKeys.revisionStatus.name]: [status] });
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
      const resumed = await condition(() => retryRequested || interruptRequested || superseded, RETRY_WAIT);
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

/** The sentence a user sees: the activity's own message (the failing command and its last lines), not a wrapper. */
function failureMessage(error: unknown, step: PipelineStep): string {
  let cause: unknown = error;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure || cause instanceof Error) {
    return cause.message || `The ${step} step failed.`;
  }
  return `The ${step} step failed.`;
}
