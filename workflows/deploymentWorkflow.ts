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
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/types';
import {
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
} from './messages';
import { type RevisionStatus } from '@graphx/contract/statuses';
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
const { provisionDatabase } = proxyActivities<PipelineActivities>({
  // Seconds of work: a worker that dies during it is noticed after this, not after the revision steps' 30 minutes.
  startToCloseTimeout: '30 seconds',
  // Bounded: the first revision's own database step tries again (and reports a failure) if these all fail.
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** Version marker: deployments created from here on provision their database at creation, not after the first build. */
const DATABASE_AT_CREATION = 'database-at-creation';

/** Workflow type `deploymentWorkflow`: the entity below, run to its end (teardown) or to continueAsNew. */
export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<void> {
  await new DeploymentEntity(input).run();
}

type ChildOutcome = { revisionId: string; status: RevisionStatus };

/**
 * The entity workflow as a small class (Temporal's entity pattern): the fields are its state, the handlers only
 * record intent, `run` is the one loop that acts. Handlers, message names and the order of effects are those of the
 * closure version it replaces, so histories of running workflows replay unchanged.
 */
class DeploymentEntity {
  private readonly state: DeploymentWorkflowState;
  private readonly details = new Map<string, EnqueueRevisionInput>();
  private readonly revisionStatuses: Record<string, RevisionStatus> = {};
  /** Arrived but not yet recorded as QUEUED. */
  private readonly arrivals: EnqueueRevisionInput[] = [];
  private readonly interruptedWhileQueued: string[] = [];
  private childOutcome: ChildOutcome | null = null;
  private supersedeSent = false;
  /** The database provisioned at creation (a teardown waits for it, so it cannot recreate what was dropped). */
  private databaseAtCreation: Promise<void> | null = null;

  constructor(private readonly input: DeploymentWorkflowInput) {
    this.state = input.state ?? {
      queuedRevisionIds: [],
      seenRevisionIds: [],
      runningRevisionId: null,
      activeRevisionId: null,
      deleteRequested: false,
    };
    setHandler(enqueueRevisionSignal, (revision) => this.onEnqueue(revision));
    setHandler(deleteDeploymentSignal, (request) => {
      this.state.deleteRequested = true;
      this.state.deleteTracingProject = Boolean(request?.deleteTracingProject);
    });
    setHandler(interruptQueuedRevisionSignal, ({ revisionId }) => this.onInterruptQueued(revisionId));
    setHandler(deploymentStateQuery, () => ({ ...this.state, revisionStatuses: { ...this.revisionStatuses } }));
  }

  async run(): Promise<void> {
    const { state } = this;
    // The database belongs to the deployment, not to a build: provisioned as it is created (as the real control
    // plane does: AWAITING_DATABASE → READY after create), beside the first revision's clone and build, so a
    // deployment whose first build fails is READY, not AWAITING_DATABASE forever.
    if (!this.input.state && patched(DATABASE_AT_CREATION)) {
      this.databaseAtCreation = provisionDatabase({ deploymentId: this.input.deploymentId }).catch(() => undefined);
    }
    // After continueAsNew a revision may still be running as a child of the previous run: follow it by id.
    if (state.runningRevisionId) {
      const orphanId = state.runningRevisionId;
      state.queuedRevisionIds.unshift(orphanId);
      state.runningRevisionId = null;
    }

    for (;;) {
      await condition(() => this.hasWork());

      if (this.arrivals.length > 0) {
        await this.queueArrivals();
        continue;
      }
      if (this.interruptedWhileQueued.length > 0) {
        for (const revisionId of this.interruptedWhileQueued.splice(0)) {
          await this.setRevisionStatus(revisionId, 'INTERRUPTED', 'Interrupted by a user before it started.');
        }
        continue;
      }
      if (this.childOutcome) {
        this.settleChild(this.childOutcome);
        continue;
      }
      if (state.deleteRequested) {
        await this.tearDown();
        return;
      }
      if (this.shouldSupersede()) {
        // A newer revision waits: if the running one has failed and waits for retry, it stops waiting.
        this.supersedeSent = true;
        await signalRevisionIfRunning(state.runningRevisionId as string, supersedeSignal);
        continue;
      }
      if (state.runningRevisionId === null && state.queuedRevisionIds.length > 0) {
        await this.startNewest();
        continue;
      }
      if (state.runningRevisionId === null && workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof deploymentWorkflow>({ ...this.input, state });
      }
    }
  }

  private onEnqueue(revision: EnqueueRevisionInput): void {
    const { state } = this;
    // The outbox delivers at least once: a revision already seen is ignored.
    if (state.seenRevisionIds.includes(revision.revisionId) || state.deleteRequested) return;
    state.seenRevisionIds.push(revision.revisionId);
    if (state.seenRevisionIds.length > SEEN_LIMIT) state.seenRevisionIds.splice(0, state.seenRevisionIds.length - SEEN_LIMIT);
    this.arrivals.push(revision);
  }

  private onInterruptQueued(revisionId: string): void {
    const queuedIndex = this.state.queuedRevisionIds.indexOf(revisionId);
    if (queuedIndex >= 0) this.state.queuedRevisionIds.splice(queuedIndex, 1);
    const arrivalIndex = this.arrivals.findIndex((revision) => revision.revisionId === revisionId);
    if (arrivalIndex >= 0) this.arrivals.splice(arrivalIndex, 1);
    if (queuedIndex >= 0 || arrivalIndex >= 0) this.interruptedWhileQueued.push(revisionId);
  }

  private hasWork(): boolean {
    const { state } = this;
    return (
      this.arrivals.length > 0 ||
      this.interruptedWhileQueued.length > 0 ||
      this.childOutcome !== null ||
      state.deleteRequested ||
      (state.runningRevisionId === null && state.queuedRevisionIds.length > 0) ||
      this.shouldSupersede() ||
      (state.runningRevisionId === null && workflowInfo().continueAsNewSuggested)
    );
  }

  private shouldSupersede(): boolean {
    return this.state.runningRevisionId !== null && this.state.queuedRevisionIds.length > 0 && !this.supersedeSent;
  }

  private async queueArrivals(): Promise<void> {
    for (const revision of this.arrivals.splice(0)) {
      this.details.set(revision.revisionId, revision);
      this.state.queuedRevisionIds.push(revision.revisionId);
      await this.setRevisionStatus(revision.revisionId, 'QUEUED');
    }
  }

  private settleChild(outcome: ChildOutcome): void {
    this.childOutcome = null;
    this.state.runningRevisionId = null;
    this.revisionStatuses[outcome.revisionId] = outcome.status;
    if (outcome.status === 'DEPLOYED') this.state.activeRevisionId = outcome.revisionId;
  }

  private async tearDown(): Promise<void> {
    const { state, input } = this;
    // Bounded: a provisioning stuck on a dead worker must not hold the delete for its retries.
    if (this.databaseAtCreation) await Promise.race([this.databaseAtCreation, sleep('2 minutes')]);
    if (state.runningRevisionId) {
      await signalRevisionIfRunning(state.runningRevisionId, interruptSignal);
      await condition(() => this.childOutcome !== null);
      state.runningRevisionId = null;
    }
    for (const revisionId of state.queuedRevisionIds.splice(0)) {
      await this.setRevisionStatus(revisionId, 'SKIPPED', 'The deployment was deleted.');
    }
    await recordDeploymentStatus({ deploymentId: input.deploymentId, status: 'AWAITING_DELETE' });
    await teardownDeployment({ deploymentId: input.deploymentId, deleteTracingProject: Boolean(state.deleteTracingProject) });
  }

  private async startNewest(): Promise<void> {
    const newest = this.state.queuedRevisionIds.pop() as string;
    for (const older of this.state.queuedRevisionIds.splice(0)) {
      await this.setRevisionStatus(older, 'SKIPPED', `Superseded by a newer revision (${newest}).`);
    }
    await this.startRevision(newest);
  }

  private async setRevisionStatus(revisionId: string, status: RevisionStatus, statusMessage: string | null = null) {
    this.revisionStatuses[revisionId] = status;
    await recordRevisionStatus({ revisionId, status, statusMessage });
  }

  private async startRevision(revisionId: string): Promise<void> {
    const { input } = this;
    const revision = this.details.get(revisionId);
    this.state.runningRevisionId = revisionId;
    this.supersedeSent = false;
    this.revisionStatuses[revisionId] = 'AWAITING_BUILD';
    const child = await startChild(revisionWorkflow, {
      workflowId: revisionWorkflowId(revisionId),
      // The installation's control queue: this workflow's own.
      taskQueue: workflowInfo().taskQueue,
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
      typedSearchAttributes: [
        { key: searchAttributeKeys.tenantId, value: input.tenantId },
        { key: searchAttributeKeys.deploymentId, value: input.deploymentId },
        { key: searchAttributeKeys.deploymentName, value: input.deploymentName },
        { key: searchAttributeKeys.revisionId, value: revisionId },
        { key: searchAttributeKeys.revisionStatus, value: 'AWAITING_BUILD' },
      ],
    });
    void child.result().then(
      (view) => (this.childOutcome = { revisionId, status: view.status }),
      () => (this.childOutcome = { revisionId, status: 'UNKNOWN' }),
    );
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
