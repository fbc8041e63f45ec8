/**
 * The deployment and revision workflows on the real Temporal dev server, with in-memory activities (the real
 * activities have their own tests): ordering, queueing, skipping, retry, interrupt and delete.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { PipelineActivities, RecordRevisionStatusInput } from '../../../activities/types';
import { signalDeploymentWorkflow } from '../../../src/pipeline/deploymentWorkflowClient';
import {
  deploymentStateQuery,
  deploymentWorkflowId,
  interruptSignal,
  retryRevisionUpdate,
  retrySignal,
  revisionWorkflowId,
  statusQuery,
  taskQueues,
} from '../../../workflows/messages';
import { type RevisionStatus } from '@graphx/contract/statuses';
import { findTemporalCli } from '../../../src/temporal/devServer';
import { HEARTBEAT_THROTTLE } from '../../../src/worker';
import { testEnv, testTemporalClient } from '../../support/env';

// Task queues of this file's own: no other stack's worker of the test run takes its tasks (nor it theirs).
const QUEUES = taskQueues(`test-wf-${crypto.randomBytes(4).toString('hex')}`);

interface Harness {
  statuses: Map<string, RevisionStatus[]>;
  calls: string[];
  /** Revisions whose build waits until released. */
  heldBuilds: Set<string>;
  failingBuilds: Set<string>;
  cancelledBuilds: string[];
  teardowns: string[];
}

const harness: Harness = {
  statuses: new Map(),
  calls: [],
  heldBuilds: new Set(),
  failingBuilds: new Set(),
  cancelledBuilds: [],
  teardowns: [],
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const inMemoryActivities: PipelineActivities = {
  async recordRevisionStatus(input: RecordRevisionStatusInput) {
    const list = harness.statuses.get(input.revisionId) ?? [];
    if (list[list.length - 1] !== input.status) list.push(input.status);
    harness.statuses.set(input.revisionId, list);
  },
  async recordDeploymentStatus() {},
  async cloneRepository({ revisionId }) {
    harness.calls.push(`clone:${revisionId}`);
    return { repoCommitSha: 'a'.repeat(40) };
  },
  async buildApplication({ revisionId }) {
    harness.calls.push(`build:${revisionId}`);
    const context = Context.current();
    while (harness.heldBuilds.has(revisionId)) {
      context.heartbeat({ phase: 'build', lastLines: ['waiting'] });
      try {
        await Promise.race([context.cancelled, sleep(100)]);
      } catch (error) {
        harness.cancelledBuilds.push(revisionId);
        throw error;
      }
    }
    if (harness.failingBuilds.has(revisionId)) {
      throw ApplicationFailure.nonRetryable('`npm run build` exited with code 1: Error: missing module ./nowhere', 'BuildFailed');
    }
  },
  async provisionDatabase() {
    harness.calls.push('database');
  },
  async rolloutRevision({ revisionId }) {
    harness.calls.push(`rollout:${revisionId}`);
    return { url: 'http://127.0.0.1:1/x' };
  },
  async teardownDeployment({ deploymentId }) {
    harness.teardowns.push(deploymentId);
  },
};

describe('deployment and revision workflows (in-memory activities, real Temporal dev server)', () => {
  let temporal: Client;
  let connection: NativeConnection;
  let workers: Worker[];
  let running: Promise<unknown>;
  const startedDeployments: string[] = [];

  beforeAll(async () => {
    temporal = await testTemporalClient();
    connection = await NativeConnection.connect({ address: testEnv.temporalAddress() });
    const { cloneRepository, buildApplication, ...control } = inMemoryActivities;
    workers = [
      await Worker.create({
        connection,
        taskQueue: QUEUES.control,
        workflowBundle: { codePath: testEnv.workflowBundlePath() },
        activities: control,
        ...HEARTBEAT_THROTTLE,
      }),
      await Worker.create({
        connection,
        taskQueue: QUEUES.build,
        activities: { cloneRepository, buildApplication },
        ...HEARTBEAT_THROTTLE,
      }),
    ];
    running = Promise.all(workers.map((worker) => worker.run()));
  });

  afterAll(async () => {
    // GRAPHX_RECORD_HISTORIES=<dir>: keep every workflow these scenarios ran as replay fixtures (historyReplay.test.ts).
    if (process.env.GRAPHX_RECORD_HISTORIES) await recordHistories(process.env.GRAPHX_RECORD_HISTORIES);
    for (const deploymentId of startedDeployments) {
      await temporal.workflow
        .getHandle(deploymentWorkflowId(deploymentId))
        .terminate('test over')
        .catch(() => undefined);
    }
    workers.forEach((worker) => worker.shutdown());
    await running;
    await connection.close();
    await temporal.connection.close();
  });

  /** Writes the histories of the deployment workflows these tests started and of their revisions' workflows. */
  async function recordHistories(dir: string): Promise<void> {
    fs.mkdirSync(dir, { recursive: true });
    const ids = [...startedDeployments.map(deploymentWorkflowId), ...[...harness.statuses.keys()].map(revisionWorkflowId)];
    for (const [index, workflowId] of ids.entries()) {
      // The Temporal CLI's JSON is the format `temporal workflow show` gives operators and replay reads. A revision
      // skipped or interrupted while queued never had a workflow of its own.
      let json: string;
      try {
        json = execFileSync(
          findTemporalCli(),
          ['workflow', 'show', '--workflow-id', workflowId, '--address', testEnv.temporalAddress(), '--output', 'json'],
          { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
        );
      } catch {
        continue;
      }
      const kind = workflowId.split('/')[0];
      fs.writeFileSync(path.join(dir, `${kind}-${String(index).padStart(2, '0')}.json`), json);
    }
  }

  /** Sends the outbox's enqueue_revision signal for revision `revisionNumber` (a new id unless given); returns its id. */
  async function enqueue(
    deploymentId: string,
    revisionNumber: number,
    { revisionId = crypto.randomUUID(), name = `wf-${revisionNumber}` }: { revisionId?: string; name?: string } = {},
  ): Promise<string> {
    if (!startedDeployments.includes(deploymentId)) startedDeployments.push(deploymentId);
    await signalDeploymentWorkflow(
      temporal,
      {
        kind: 'enqueue_revision',
        deploymentId,
        payload: {
          revisionId,
          revisionNumber,
          repoRef: 'main',
          tenantId: crypto.randomUUID(),
          deploymentName: name,
        },
      },
      QUEUES.control,
    );
    return revisionId;
  }

  async function waitForStatus(revisionId: string, status: RevisionStatus, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (harness.statuses.get(revisionId)?.includes(status)) return;
      await sleep(50);
    }
    throw new Error(`revision ${revisionId} never reached ${status}; saw ${harness.statuses.get(revisionId)?.join(' → ')}`);
  }

  it('takes a revision through the pipeline states in order to DEPLOYED and makes it active', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = await enqueue(deploymentId, 1);
    await waitForStatus(revisionId, 'DEPLOYED');
    expect(harness.statuses.get(revisionId)).toEqual([
      'QUEUED',
      'AWAITING_BUILD',
      'BUILDING',
      'AWAITING_DEPLOY',
      'DEPLOYING',
      'DEPLOYED',
    ]);
    // The parent learns the child's result just after the child records DEPLOYED.
    const deployment = temporal.workflow.getHandle(deploymentWorkflowId(deploymentId));
    const deadline = Date.now() + 10_000;
    while ((await deployment.query(deploymentStateQuery)).activeRevisionId !== revisionId && Date.now() < deadline)
      await sleep(50);
    expect((await deployment.query(deploymentStateQuery)).activeRevisionId).toBe(revisionId);
    const view = await temporal.workflow.getHandle(revisionWorkflowId(revisionId)).query(statusQuery);
    expect(view).toMatchObject({ status: 'DEPLOYED', repoCommitSha: 'a'.repeat(40) });
  });

  it('ignores a revision delivered twice by the outbox', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = await enqueue(deploymentId, 1);
    await enqueue(deploymentId, 1, { revisionId, name: 'wf-dup' });
    await waitForStatus(revisionId, 'DEPLOYED');
    expect(harness.calls.filter((call) => call === `rollout:${revisionId}`)).toHaveLength(1);
  });

  it('lets the building revision finish, skips the two older queued ones and deploys the newest', async () => {
    const deploymentId = crypto.randomUUID();
    const first = crypto.randomUUID();
    harness.heldBuilds.add(first);
    await enqueue(deploymentId, 1, { revisionId: first, name: 'wf-q' });
    await waitForStatus(first, 'BUILDING');
    const second = await enqueue(deploymentId, 2);
    const third = await enqueue(deploymentId, 3);
    const fourth = await enqueue(deploymentId, 4);
    await waitForStatus(fourth, 'QUEUED');
    harness.heldBuilds.delete(first);
    await waitForStatus(fourth, 'DEPLOYED');
    expect(harness.statuses.get(first)?.at(-1)).toBe('DEPLOYED');
    expect(harness.statuses.get(second)).toEqual(['QUEUED', 'SKIPPED']);
    expect(harness.statuses.get(third)).toEqual(['QUEUED', 'SKIPPED']);
    expect(harness.calls.indexOf(`rollout:${first}`)).toBeLessThan(harness.calls.indexOf(`build:${fourth}`));
  });

  it('leaves a failed build waiting as BUILD_FAILED and resumes from the build step on the retry signal', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = crypto.randomUUID();
    harness.failingBuilds.add(revisionId);
    await enqueue(deploymentId, 1, { revisionId, name: 'wf-retry' });
    await waitForStatus(revisionId, 'BUILD_FAILED');
    const handle = temporal.workflow.getHandle(revisionWorkflowId(revisionId));
    const failed = await handle.query(statusQuery);
    expect(failed).toMatchObject({ status: 'BUILD_FAILED', failedStep: 'build' });
    expect(failed.statusMessage).toContain('Error: missing module ./nowhere');
    harness.failingBuilds.delete(revisionId);
    await handle.signal(retrySignal);
    await waitForStatus(revisionId, 'DEPLOYED');
    expect(harness.calls.filter((call) => call === `clone:${revisionId}`)).toHaveLength(1);
    expect(harness.calls.filter((call) => call === `build:${revisionId}`)).toHaveLength(2);
  });

  /** The workflow's current details, as the Temporal UI shows them (the SDK's built-in metadata query). */
  async function currentDetails(revisionId: string): Promise<string> {
    const metadata = await temporal.workflow
      .getHandle(revisionWorkflowId(revisionId))
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    return metadata.currentDetails ?? '';
  }

  it('a revision waiting for retry says in its current details what failed, how to retry and until when; the retryRevision update resumes it', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = crypto.randomUUID();
    harness.failingBuilds.add(revisionId);
    await enqueue(deploymentId, 2, { revisionId, name: 'wf-ui' });
    await waitForStatus(revisionId, 'BUILD_FAILED');
    const details = await currentDetails(revisionId);
    expect(details).toContain('**BUILD_FAILED** at the **build** step of wf-ui revision 2');
    expect(details).toContain('Error: missing module ./nowhere');
    expect(details).toContain(`POST /v2/deployments/${deploymentId}/revisions/${revisionId}/retry`);
    expect(details).toContain(`--workflow-id revision/${revisionId} --name retryRevision`);
    const until = /until \*\*(.+?)\*\*/.exec(details)?.[1];
    const hoursLeft = (Date.parse(until as string) - Date.now()) / 3_600_000;
    expect(hoursLeft).toBeGreaterThan(7 * 24 - 1);
    expect(hoursLeft).toBeLessThanOrEqual(7 * 24);

    harness.failingBuilds.delete(revisionId);
    const result = await temporal.workflow.getHandle(revisionWorkflowId(revisionId)).executeUpdate(retryRevisionUpdate);
    expect(result).toEqual({ revisionId, resumesAt: 'build' });
    await waitForStatus(revisionId, 'DEPLOYED');
    expect(harness.calls.filter((call) => call === `build:${revisionId}`)).toHaveLength(2);
  });

  it('rejects a retryRevision update to a revision that has not failed, naming its status, and leaves it running', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = crypto.randomUUID();
    harness.heldBuilds.add(revisionId);
    await enqueue(deploymentId, 1, { revisionId, name: 'wf-noretry' });
    await waitForStatus(revisionId, 'BUILDING');
    const handle = temporal.workflow.getHandle(revisionWorkflowId(revisionId));
    const refused = await handle.executeUpdate(retryRevisionUpdate).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((refused as WorkflowUpdateFailedError).cause as Error).message).toBe(
      `Revision ${revisionId} is BUILDING; only a BUILD_FAILED or DEPLOY_FAILED revision can be retried.`,
    );
    // A rejected update leaves no event in the history.
    const history = await handle.fetchHistory();
    expect(JSON.stringify(history.events)).not.toContain('retryRevision');
    expect((await handle.query(statusQuery)).status).toBe('BUILDING');
    harness.heldBuilds.delete(revisionId);
    await waitForStatus(revisionId, 'DEPLOYED');
  });

  it('interrupts a running build: the activity is cancelled and the revision ends INTERRUPTED', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = crypto.randomUUID();
    harness.heldBuilds.add(revisionId);
    await enqueue(deploymentId, 1, { revisionId, name: 'wf-int' });
    await waitForStatus(revisionId, 'BUILDING');
    await sleep(300);
    await temporal.workflow.getHandle(revisionWorkflowId(revisionId)).signal(interruptSignal);
    await waitForStatus(revisionId, 'INTERRUPTED');
    harness.heldBuilds.delete(revisionId);
    expect(harness.cancelledBuilds).toContain(revisionId);
    expect(harness.calls).not.toContain(`rollout:${revisionId}`);
  });

  it('tears the deployment down on delete and completes its workflow', async () => {
    const deploymentId = crypto.randomUUID();
    const revisionId = await enqueue(deploymentId, 1);
    await waitForStatus(revisionId, 'DEPLOYED');
    await signalDeploymentWorkflow(
      temporal,
      {
        kind: 'delete_deployment',
        deploymentId,
        payload: { tenantId: crypto.randomUUID(), deploymentName: 'wf-del', deleteTracingProject: false },
      },
      QUEUES.control,
    );
    await temporal.workflow.getHandle(deploymentWorkflowId(deploymentId)).result();
    expect(harness.teardowns).toContain(deploymentId);
  });
});
