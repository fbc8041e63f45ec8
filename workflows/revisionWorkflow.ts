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
  workflowInfo,
  ActivityFailure,
  ActivityCancellationType,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/types';
import {
  buildQueueOf,
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
const BUILD_OPTIONS: ActivityOptions = {
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
};
/**
 * Clone and build run on the build queue of this workflow's installation (messages.ts `taskQueues`): derived from the
 * workflow's own task queue, which its history fixes, so replay schedules them where they ran.
 */
const onBuildQueue = () =>
  proxyActivities<PipelineActivities>({ taskQueue: buildQueueOf(workflowInfo().taskQueue), ...BUILD_OPTIONS });
// Without a task queue: the workflow's own, the installation's control queue.
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

/** Workflow type `revisionWorkflow`: the entity below, run until the revision is DEPLOYED or ends otherwise. */
export async function revisionWorkflow(input: RevisionWorkflowInput): Promise<RevisionStatusView> {
  return new RevisionEntity(input).run();
}

/**
 * One revision's pipeline as an entity (as DeploymentEntity): the fields are its state, handlers only record intent
 * (or cancel the running step's scope), `run` is the one loop that acts. Handlers, message names and the order of
 * every command are those of the closure version it replaces, so recorded histories replay unchanged
 * (test/integration/workflows/historyReplay.test.ts).
 */
class RevisionEntity {
  private readonly view: RevisionStatusView;
  private retryRequested = false;
  private interruptRequested = false;
  private superseded = false;
  /** True only while the revision waits for retry: a failed status alone is not enough (it may be ending). */
  private waitingForRetry = false;
  private scope: CancellationScope | null = null;
  /** What the rollout returned; recorded with DEPLOYED so the URL and the status are written together. */
  private url: string | null = null;
  /** Index in PIPELINE_STEPS of the step to run next (a retry resumes at the step that failed). */
  private nextStep = 0;

  constructor(private readonly input: RevisionWorkflowInput) {
    this.view = {
      revisionId: input.revisionId,
      status: 'AWAITING_BUILD',
      statusMessage: null,
      failedStep: null,
      repoCommitSha: null,
    };
    setHandler(statusQuery, () => ({ ...this.view }));
    setHandler(retrySignal, () => {
      // Retry only means something to a failed revision; a retry sent while it runs is ignored, not queued. A signal
      // cannot answer, so the refusal goes to the workflow log (worker output) for whoever sent it.
      if (this.waitingForRetry) this.retryRequested = true;
      else log.warn('retry signal ignored', { revisionId: input.revisionId, reason: this.cannotRetry() });
    });
    setHandler(
      retryRevisionUpdate,
      () => {
        this.retryRequested = true;
        return { revisionId: input.revisionId, resumesAt: this.view.failedStep ?? 'clone' };
      },
      {
        // A rejected update leaves no trace in the history: the caller gets the reason, the workflow is untouched.
        validator: () => {
          const reason = this.cannotRetry();
          if (reason) throw new Error(reason);
        },
      },
    );
    setHandler(interruptSignal, () => {
      this.interruptRequested = true;
      this.scope?.cancel();
    });
    setHandler(supersedeSignal, () => {
      this.superseded = true;
    });
  }

  async run(): Promise<RevisionStatusView> {
    await this.setStatus('AWAITING_BUILD');
    while (this.nextStep < PIPELINE_STEPS.length) {
      const step = PIPELINE_STEPS[this.nextStep] as PipelineStep;
      if ((await this.attempt(step)) === 'ended') return { ...this.view };
    }
    await this.setStatus('DEPLOYED');
    return { ...this.view };
  }

  /** Runs `step` once; a failure waits for retry (then the loop runs the failed step again) or ends the revision. */
  private async attempt(step: PipelineStep): Promise<'continue' | 'ended'> {
    try {
      if (this.interruptRequested) throw new CancelledByInterrupt();
      if (this.view.status !== STEP_STATUS[step].running) await this.setStatus(STEP_STATUS[step].running);
      this.scope = new CancellationScope();
      await this.scope.run(() => this.runStep(step));
      this.scope = null;
      this.nextStep += 1;
      if (step === 'build') await this.setStatus('AWAITING_DEPLOY');
      return 'continue';
    } catch (error) {
      this.scope = null;
      if (this.interruptRequested || isCancellation(error) || error instanceof CancelledByInterrupt) {
        await this.setStatus('INTERRUPTED', 'Interrupted by a user.');
        return 'ended';
      }
      return this.waitForRetry(step, error);
    }
  }

  /** Records the step's failure and waits (up to RETRY_WAIT) for retry, interrupt or a newer revision. */
  private async waitForRetry(step: PipelineStep, error: unknown): Promise<'continue' | 'ended'> {
    await this.setStatus(STEP_STATUS[step].failed, failureMessage(error, step), step);
    this.retryRequested = false;
    this.waitingForRetry = true;
    setCurrentDetails(retryDetails(this.input, this.view, new Date(Date.now() + RETRY_WAIT_MS)));
    const resumed = await condition(() => this.retryRequested || this.interruptRequested || this.superseded, RETRY_WAIT);
    this.waitingForRetry = false;
    setCurrentDetails('');
    if (!resumed || this.superseded) return 'ended';
    if (this.interruptRequested) {
      await this.setStatus('INTERRUPTED', 'Interrupted by a user.');
      return 'ended';
    }
    // Retry: resume from the step that failed.
    return 'continue';
  }

  private async runStep(step: PipelineStep): Promise<void> {
    const ref = { revisionId: this.input.revisionId, deploymentId: this.input.deploymentId };
    switch (step) {
      case 'clone':
        this.view.repoCommitSha = (await onBuildQueue().cloneRepository(ref)).repoCommitSha;
        return;
      case 'build':
        await onBuildQueue().buildApplication(ref);
        return;
      case 'database':
        await controlQueue.provisionDatabase({ deploymentId: this.input.deploymentId });
        return;
      case 'rollout':
        this.url = (await controlQueue.rolloutRevision(ref)).url;
        return;
    }
  }

  private cannotRetry(): string | null {
    const { revisionId } = this.input;
    if (this.interruptRequested) return `Revision ${revisionId} is being interrupted; it cannot be retried.`;
    if (this.superseded) return `Revision ${revisionId} was replaced by a newer revision; it cannot be retried.`;
    if (!this.waitingForRetry || !isFailedRevisionStatus(this.view.status)) {
      return `Revision ${revisionId} is ${this.view.status}; only a BUILD_FAILED or DEPLOY_FAILED revision can be retried.`;
    }
    return null;
  }

  private async setStatus(
    status: RevisionStatus,
    statusMessage: string | null = null,
    failedStep: PipelineStep | null = null,
  ): Promise<void> {
    this.view.status = status;
    this.view.statusMessage = statusMessage;
    this.view.failedStep = failedStep;
    upsertSearchAttributes([{ key: searchAttributeKeys.revisionStatus, value: status }]);
    // Not cancellable: the database must learn the final status even while the scope is being cancelled.
    const url = this.url;
    await CancellationScope.nonCancellable(() =>
      recordRevisionStatus({
        revisionId: this.input.revisionId,
        status,
        statusMessage,
        failedStep,
        repoCommitSha: this.view.repoCommitSha,
        ...(status === 'DEPLOYED' && url ? { url } : {}),
      }),
    );
  }
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
