/**
 * Issue 10's recovery acceptance in container mode, through the public API plus what the engine shows: retry of a
 * failed image build, interrupt during BUILDING (the build's step is gone from the engine), redeploy of an earlier
 * revision (its image serves again), and a `graphx worker` process SIGKILLed in BUILDING and in DEPLOYING (one running
 * app container afterwards, no build left behind). The process-mode versions are in pipeline.test.ts and
 * workerCrash.test.ts. One stack without a worker and one worker process (replaced by the crash test) serve the file.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LABELS } from '../../src/targets/container/containerInstances';
import { describeWithEngine, startTestEngine, type TestEngine } from '../support/containerEngine';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, streamEchoRun, type PipelineStack } from '../support/pipelineStack';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../support/runtimeImage';
import { killWorkerProcess, processesMentioning, startWorkerProcess } from '../support/workerProcess';

jest.setTimeout(360_000);

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const settled = (status: string) => ['DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(status);
/** Every image build step's command line names the env file mounted for it (src/containers/revisionImages.ts). */
const BUILD_STEP_MARK = '/run/graphx/build.env';

describeWithEngine(
  'container-mode pipeline recovery (GRAPHX_RUNNER=container): retry, interrupt, redeploy, worker SIGKILL',
  () => {
    let engine: TestEngine;
    let pipeline: PipelineStack;
    let repo: GitRepo;
    let worker: ChildProcess;
    const workers: ChildProcess[] = [];
    const containerEnv = () => ({ GRAPHX_RUNNER: 'container', GRAPHX_CONTAINER_SOCKET: engine.service.socketPath });

    const startWorker = () => {
      worker = startWorkerProcess(pipeline, containerEnv());
      workers.push(worker);
      return worker;
    };

    beforeAll(async () => {
      engine = await startTestEngine();
      await ensureTestRuntimeImage(engine.engine);
      pipeline = await startPipelineStack({ worker: false, env: containerEnv() });
      repo = createGitRepo(FIXTURE);
      const graph = fs.readFileSync(path.join(repo.dir, 'src', 'graph.js'), 'utf8');
      // Branch v2 answers differently, so a test can tell which revision serves.
      repo.branch('v2', true);
      repo.commit('v2 answers with v2:', { 'src/graph.js': graph.replace('`echo: ${', '`v2: ${') });
      // Branch slow takes 4 s to load, so DEPLOYING lasts long enough to kill a worker in it.
      repo.checkout('main');
      repo.branch('slow', true);
      repo.commit('slow start', { 'src/graph.js': `await new Promise((resolve) => setTimeout(resolve, 4000));\n${graph}` });
      repo.checkout('main');
      startWorker();
    }, IMAGE_BUILD_HOOK_MS);
    afterAll(async () => {
      for (const started of workers) await killWorkerProcess(started);
      await pipeline?.stop();
    });

    const newName = (prefix: string) => `${prefix}-${crypto.randomBytes(3).toString('hex')}`;
    const revisionOf = async (deploymentId: string, revisionId: string) =>
      (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    const deploymentOf = async (deploymentId: string) => (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
    const runningContainersOf = async (deploymentId: string) =>
      (await engine.engine.listContainers({ [LABELS.deployment]: deploymentId })).filter((c) => c.state === 'running');

    async function expectDeployed(deploymentId: string, revisionId: string) {
      await pipeline.waitForRevision(deploymentId, revisionId, settled, 240_000);
      const revision = await revisionOf(deploymentId, revisionId);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      return revision;
    }

    async function answer(url: string, input: string) {
      return (await streamEchoRun(url, pipeline.apiKey, input)).find((event) => event.event === 'updates')?.data;
    }

    /** The revisions of the deployment's running containers, once only one runs (or after 30 s). */
    async function runningRevisionsOnceSettled(deploymentId: string): Promise<string[]> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const running = await runningContainersOf(deploymentId);
        if (running.length <= 1 || Date.now() > deadline)
          return running.map((container) => container.labels[LABELS.revision] as string);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }

    async function deleteAndWait(deploymentId: string) {
      expect((await pipeline.api('DELETE', `/v2/deployments/${deploymentId}`)).status).toBe(204);
      const deadline = Date.now() + 90_000;
      while ((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status !== 404 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status).toBe(404);
      expect(await runningContainersOf(deploymentId)).toEqual([]);
    }

    it('redeploys an earlier revision as a new revision that runs the earlier revision’s image (not its moved branch) and serves it again', async () => {
      // A branch of its own at v2's tip, which this test moves on (branch v2 stays, so a retry starts as the first try).
      const branch = newName('v2-copy');
      repo.git('branch', branch, 'v2');
      const created = await pipeline.api(
        'POST',
        '/v2/deployments',
        codehostDeployment(newName('rollback'), repo.url, { repoRef: branch }),
      );
      expect(created.status).toBe(201);
      const deploymentId: string = created.body.id;
      const v2 = await expectDeployed(deploymentId, created.body.latest_revision_id);
      // The branch moves on after that revision was built: a rollback must not pick the new commit up.
      repo.checkout(branch);
      const v2Graph = fs.readFileSync(path.join(repo.dir, 'src', 'graph.js'), 'utf8');
      const movedGraph = v2Graph.replace('`v2: ${', '`moved: ${');
      expect(movedGraph).not.toBe(v2Graph);
      repo.commit('v2 moves on', { 'src/graph.js': movedGraph });
      repo.checkout('main');
      const patched = await pipeline.api('PATCH', `/v2/deployments/${deploymentId}`, {
        source_revision_config: { repo_ref: 'main' },
      });
      await expectDeployed(deploymentId, patched.body.latest_revision_id);
      const url = (await deploymentOf(deploymentId)).url as string;
      expect(await answer(url, 'x')).toEqual({ respond: { echo: 'echo: x' } });

      const redeployed = await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${v2.id}/redeploy`);
      expect(redeployed.status).toBe(200);
      const rollbackId: string = redeployed.body.latest_revision_id;
      expect(rollbackId).not.toBe(v2.id);
      const rollback = await expectDeployed(deploymentId, rollbackId);
      expect(rollback.source_revision_config.repo_commit_sha).toBe(v2.source_revision_config.repo_commit_sha);
      expect(rollback.source_revision_config.image_digest).toBe(v2.source_revision_config.image_digest);
      expect(await answer(url, 'y')).toEqual({ respond: { echo: 'v2: y' } });
      // The replaced revision's container drains after the route switch (which DEPLOYED comes with), then goes.
      expect(await runningRevisionsOnceSettled(deploymentId)).toEqual([rollbackId]);
      await deleteAndWait(deploymentId);
      expect(await engine.engine.inspectImage(rollback.source_revision_config.image_ref)).toBeNull();
      expect(await engine.engine.inspectImage(v2.source_revision_config.image_ref)).toBeNull();
    });

    it('ends a failing image build BUILD_FAILED with its output, and POST …/retry builds it again to DEPLOYED without a new revision', async () => {
      // The build step fails until a moment 90 s away has passed, as a step depending on a registry that is down would.
      // The margin covers a fresh machine's first dependency install before the step (it must fail the first time).
      const until = Math.floor(Date.now() / 1000) + 90;
      const created = await pipeline.api(
        'POST',
        '/v2/deployments',
        codehostDeployment(newName('retry'), repo.url, {
          sourceConfig: { build_command: `test $(date +%s) -ge ${until} || { echo "registry is down until ${until}"; exit 3; }` },
        }),
      );
      expect(created.status).toBe(201);
      const deploymentId: string = created.body.id;
      const revisionId: string = created.body.latest_revision_id;
      await pipeline.waitForRevision(deploymentId, revisionId, settled);
      const failed = await revisionOf(deploymentId, revisionId);
      expect(failed.status).toBe('BUILD_FAILED');
      expect(failed.status_message).toContain(`registry is down until ${until}`);
      expect(failed.status_message).toContain('exit status 3');
      expect(await runningContainersOf(deploymentId)).toEqual([]);

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, until * 1000 - Date.now() + 1000)));
      const retried = await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${revisionId}/retry`);
      expect(retried.status).toBe(202);
      const revision = await expectDeployed(deploymentId, revisionId);
      expect(revision.source_revision_config.image_ref).toMatch(/^localhost\/graphx-app-/);
      const deployment = await deploymentOf(deploymentId);
      expect(deployment.active_revision_id).toBe(revisionId);
      expect((await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions`)).body.resources).toHaveLength(1);
      expect(await answer(deployment.url, 'retried')).toEqual({ respond: { echo: 'echo: retried' } });
      await deleteAndWait(deploymentId);
    });

    it('interrupts a revision during BUILDING: it ends INTERRUPTED and its build step is gone from the engine', async () => {
      const marker = `graphx-build-marker-${crypto.randomBytes(4).toString('hex')}`;
      const created = await pipeline.api(
        'POST',
        '/v2/deployments',
        codehostDeployment(newName('interrupt'), repo.url, {
          sourceConfig: { build_command: `sh -c 'sleep 120; echo ${marker}' ${marker}` },
        }),
      );
      const deploymentId: string = created.body.id;
      const revisionId: string = created.body.latest_revision_id;
      await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'BUILDING' || settled(status));
      const deadline = Date.now() + 90_000;
      while (processesMentioning(marker).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      // The step runs in the engine's build container: its command line carries the build's env file mount.
      expect(processesMentioning(marker).some((line) => line.includes(BUILD_STEP_MARK))).toBe(true);

      const interrupted = await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${revisionId}/interrupt`);
      expect(interrupted.status).toBe(202);
      await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'INTERRUPTED', 60_000);
      expect(processesMentioning(marker)).toEqual([]);
      expect(await runningContainersOf(deploymentId)).toEqual([]);
      expect((await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${revisionId}/interrupt`)).status).toBe(409);
      await deleteAndWait(deploymentId);
    });

    it('reaches DEPLOYED after the worker is SIGKILLed in BUILDING and in DEPLOYING, with one running app container and no build left', async () => {
      const marker = `graphx-crash-marker-${crypto.randomBytes(4).toString('hex')}`;
      const created = await pipeline.api(
        'POST',
        '/v2/deployments',
        codehostDeployment(newName('crash'), repo.url, {
          repoRef: 'slow',
          sourceConfig: { build_command: `sh -c 'sleep 5' ${marker}` },
        }),
      );
      expect(created.status).toBe(201);
      const deploymentId: string = created.body.id;
      const revisionId: string = created.body.latest_revision_id;

      // Killed while its build step runs in the engine.
      await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'BUILDING' || settled(status));
      const deadline = Date.now() + 90_000;
      while (processesMentioning(marker).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(processesMentioning(marker)).not.toEqual([]);
      await killWorkerProcess(worker);
      startWorker();

      await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'DEPLOYING' || settled(status));
      expect((await revisionOf(deploymentId, revisionId)).status).toBe('DEPLOYING');
      // Killed while its first app container loads (4 s).
      const starting = Date.now() + 30_000;
      while ((await engine.engine.listContainers({ [LABELS.deployment]: deploymentId })).length === 0 && Date.now() < starting) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await killWorkerProcess(worker);
      startWorker();

      await expectDeployed(deploymentId, revisionId);
      const deployment = await deploymentOf(deploymentId);
      expect(deployment.active_revision_id).toBe(revisionId);
      // Give a duplicate a moment to show itself, then count what the engine runs and what the database says runs.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const running = await runningContainersOf(deploymentId);
      expect(running.map((container) => container.labels[LABELS.revision])).toEqual([revisionId]);
      const live = await pipeline.stack
        .db('local_instances')
        .where({ deployment_id: deploymentId })
        .whereNot({ status: 'stopped' });
      expect(live.map((row) => row.id)).toEqual([running[0]?.labels[LABELS.instance]]);
      expect(processesMentioning(marker)).toEqual([]);
      expect(await answer(deployment.url, 'after crashes')).toEqual({ respond: { echo: 'echo: after crashes' } });
      await deleteAndWait(deploymentId);
    });
  },
);
