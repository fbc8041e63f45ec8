import path from 'node:path';
import { createActivities } from '../../../activities';
import { ProcessTarget } from '../../../src/targets/process';
import { isProcessAlive } from '@graphx/kit/os/processes';
import { buildPaths } from '../../../src/pipeline/revisionSpec';
import { InstanceStore } from '../../../src/db/repositories/instances';
import {
  addRevision,
  createDeployment,
  createTestDeps,
  FAKE_RUNTIME,
  runActivity,
  writeBuild,
  type RevisionOptions,
  type TestDeps,
} from '../activities/pipelineFixtures';

// Instances run test/integration/targets/fakeRuntime.js: the real runtime is being built in parallel.
describe('rolloutRevision on the local target (real processes, fake runtime script)', () => {
  let deps: TestDeps;
  let closeGateway: () => Promise<void>;
  beforeAll(async () => {
    deps = createTestDeps();
    closeGateway = await deps.target.startGateway();
    deps.target.setControlPlaneUrl('http://127.0.0.1:9/control-plane');
  });
  afterAll(async () => {
    await closeGateway();
    await deps.close();
  });

  const deployRevision = async (options: RevisionOptions = {}) => {
    const deployment = await createDeployment(deps.db, deps.secretBox, options);
    writeBuild(deps.config, deployment.revisionId);
    return deployment;
  };
  const rollout = (revisionId: string, deploymentId: string, target = deps.target) =>
    runActivity(createActivities({ ...deps, target }).rolloutRevision, { revisionId, deploymentId });
  const whoami = async (url: string) => (await (await fetch(`${url}/whoami`)).json()) as Record<string, any>;

  it('starts the instance with exactly the contract environment and routes the stable URL to it', async () => {
    const deployment = await deployRevision({
      secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-x' }],
      resourceSpec: { memory_limit_mb: 256 },
    });
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    expect(url).toBe(`${deps.target.gatewayUrl()}/${deployment.name}`);
    const row = await deps.db('deployments').where({ id: deployment.deploymentId }).first('active_revision_id', 'url');
    expect(row).toEqual({ active_revision_id: deployment.revisionId, url });

    const app = await whoami(url);
    expect(app.revisionId).toBe(deployment.revisionId);
    expect(app.envKeys).toEqual(
      [
        'DATABASE_URI',
        'GRAPHX_CONFIG_PATH',
        'GRAPHX_CONTROL_PLANE_URL',
        'GRAPHX_DEPLOYMENT_ID',
        'GRAPHX_REVISION_ID',
        'GRAPHX_SERVICE_TOKEN',
        'GRAPHX_TENANT_ID',
        'HOST',
        // What the runtime image sets too (RUNTIME_PROCESS_ENV): two malloc arenas.
        'MALLOC_ARENA_MAX',
        'NODE_OPTIONS',
        'OPENAI_API_KEY',
        'PATH',
        'PORT',
      ].sort(),
    );
    expect(app.env).toMatchObject({
      HOST: '127.0.0.1',
      NODE_OPTIONS: '--max-old-space-size=256',
      GRAPHX_CONTROL_PLANE_URL: 'http://127.0.0.1:9/control-plane',
      GRAPHX_CONFIG_PATH: path.join(buildPaths(deps.config.dataDir, deployment.revisionId).src, 'graphx.json'),
      DATABASE_URI_USER: `gx_${deployment.deploymentId.replace(/-/g, '')}`,
    });
    expect(app.cwd).toBe(buildPaths(deps.config.dataDir, deployment.revisionId).src);
    const tokens = await deps.db('service_tokens').where({ deployment_id: deployment.deploymentId }).pluck('token_hash');
    expect(tokens).toEqual([app.serviceTokenHash]);

    // The instance's own output reaches app_logs.
    await waitUntil(async () =>
      (await deps.db('app_logs').where({ deployment_id: deployment.deploymentId }).pluck('message')).some((m) =>
        m.includes('fake runtime listening'),
      ),
    );
  });

  it('an app that never becomes healthy is DeployFailed with its last output, and the previous revision keeps serving', async () => {
    const deployment = await deployRevision();
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    const before = await whoami(url);
    const broken = await addRevision(deps.db, deps.secretBox, deployment.deploymentId, {
      secrets: [{ name: 'FAKE_EXIT_WITH', value: 'yes' }],
    });
    writeBuild(deps.config, broken);
    await expect(rollout(broken, deployment.deploymentId)).rejects.toMatchObject({
      type: 'DeployFailed',
      nonRetryable: true,
      message: expect.stringMatching(/exited before answering GET \/ok[\s\S]*Cannot find module \.\/src\/graph\.js/),
    });
    expect((await whoami(url)).pid).toBe(before.pid);
    const live = await new InstanceStore(deps.db).live(deployment.deploymentId);
    expect(live.map((row) => row.revision_id)).toEqual([deployment.revisionId]);
    expect(
      (await deps.db('deployments').where({ id: deployment.deploymentId }).first('active_revision_id')).active_revision_id,
    ).toBe(deployment.revisionId);
  });

  it('a re-run after a worker crash adopts the live instance, and replaces a dead one: exactly one set runs', async () => {
    const deployment = await deployRevision();
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    const first = await whoami(url);
    // A new worker process: a fresh ProcessTarget that knows nothing but the database.
    const restarted = new ProcessTarget({ ...deps.target.options, instanceCommand: FAKE_RUNTIME });
    await rollout(deployment.revisionId, deployment.deploymentId, restarted);
    expect((await whoami(url)).pid).toBe(first.pid);
    expect(await new InstanceStore(deps.db).live(deployment.deploymentId)).toHaveLength(1);

    process.kill(first.pid, 'SIGKILL');
    await waitUntil(async () => !isProcessAlive(first.pid));
    await rollout(deployment.revisionId, deployment.deploymentId, restarted);
    const replacement = await whoami(url);
    expect(replacement.pid).not.toBe(first.pid);
    expect(await new InstanceStore(deps.db).live(deployment.deploymentId)).toHaveLength(1);
    await restarted.stopAll();
  });

  it('a worker killed between spawning an instance and recording its pid: the next attempt adopts that process, teardown stops it', async () => {
    const deployment = await deployRevision();
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    const first = await whoami(url);
    // What the killed worker left: the row (written before the spawn) without the pid it never recorded.
    const [row] = await new InstanceStore(deps.db).live(deployment.deploymentId);
    await new InstanceStore(deps.db).setPid(row!.id, null);
    const restarted = new ProcessTarget({ ...deps.target.options, instanceCommand: FAKE_RUNTIME });
    await rollout(deployment.revisionId, deployment.deploymentId, restarted);
    expect((await whoami(url)).pid).toBe(first.pid);
    const live = await new InstanceStore(deps.db).live(deployment.deploymentId);
    expect(live.map((instance) => instance.pid)).toEqual([first.pid]);

    await new InstanceStore(deps.db).setPid(row!.id, null);
    await deps.db('deployments').where({ id: deployment.deploymentId }).update({ status: 'AWAITING_DELETE' });
    await runActivity(createActivities({ ...deps, target: restarted }).teardownDeployment, {
      deploymentId: deployment.deploymentId,
    });
    await waitUntil(async () => !isProcessAlive(first.pid));
    await restarted.stopAll();
  });

  it('a serving instance that crashes is replaced by a new one of the same revision', async () => {
    const deployment = await deployRevision();
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    const first = await whoami(url);
    process.kill(first.pid, 'SIGKILL');
    await waitUntil(async () => {
      const response = await fetch(`${url}/whoami`);
      return response.status === 200 && ((await response.json()) as { pid: number }).pid !== first.pid;
    });
    const live = await new InstanceStore(deps.db).live(deployment.deploymentId);
    expect(live.map((row) => [row.revision_id, row.status])).toEqual([[deployment.revisionId, 'serving']]);
    const logs = await deps.db('app_logs').where({ deployment_id: deployment.deploymentId }).pluck('message');
    expect(logs.some((message) => message.includes('exited; starting a replacement'))).toBe(true);
  });

  it('restoreActiveInstances brings every active deployment back after a stack restart', async () => {
    const deployment = await deployRevision();
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    const before = await whoami(url);
    await deps.target.stopAll();
    expect(isProcessAlive(before.pid)).toBe(false);
    expect((await fetch(`${url}/whoami`)).status).toBe(503);

    await deps.target.restoreActiveInstances();
    const after = await whoami(url);
    expect(after.revisionId).toBe(deployment.revisionId);
    expect(after.pid).not.toBe(before.pid);
    expect(await new InstanceStore(deps.db).live(deployment.deploymentId)).toHaveLength(1);
  });

  it('a restore that waited for the lock while a newer revision rolled out leaves only the newer revision running', async () => {
    const deployment = await deployRevision();
    await rollout(deployment.revisionId, deployment.deploymentId);
    // The stack died: its instance too. A PATCHed revision (slow to answer /ok) is being rolled out by a new worker
    // while the new stack's start-up restore reads the (still) active revision and waits for the lock.
    await deps.target.stopAll();
    const newer = await addRevision(deps.db, deps.secretBox, deployment.deploymentId, {
      secrets: [{ name: 'FAKE_OK_DELAY_MS', value: '1500' }],
    });
    writeBuild(deps.config, newer);
    const worker = new ProcessTarget({ ...deps.target.options, instanceCommand: FAKE_RUNTIME });
    const rolling = rollout(newer, deployment.deploymentId, worker);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const restarted = new ProcessTarget({ ...deps.target.options, instanceCommand: FAKE_RUNTIME });
    await Promise.all([rolling, restarted.restoreActiveInstances()]);
    const live = await new InstanceStore(deps.db).live(deployment.deploymentId);
    expect(live.map((row) => [row.revision_id, row.status])).toEqual([[newer, 'serving']]);
    await worker.stopAll();
    await restarted.stopAll();
  });

  it('teardown stops the instances and the gateway stops serving the deployment', async () => {
    const deployment = await deployRevision();
    const { url } = await rollout(deployment.revisionId, deployment.deploymentId);
    const app = await whoami(url);
    await deps.db('deployments').where({ id: deployment.deploymentId }).update({ status: 'AWAITING_DELETE' });
    await runActivity(createActivities(deps).teardownDeployment, { deploymentId: deployment.deploymentId });
    expect(isProcessAlive(app.pid)).toBe(false);
    expect(await new InstanceStore(deps.db).live(deployment.deploymentId)).toHaveLength(0);
    await waitUntil(async () => (await fetch(`${url}/whoami`)).status === 404);
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
