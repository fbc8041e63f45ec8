/**
 * Issue 21 end to end: a control plane with GRAPHX_RUNNER=kubernetes (the whole stack: Temporal dev server,
 * PostgreSQL, the API, an in-process worker) deploys through POST /v2/deployments onto a real kube-apiserver and
 * controller manager (test/support/kubeCluster.ts), as graphx's RBAC-limited service account from a kubeconfig. The
 * revision is built as for the container runner (podman, the runtime image), pushed with skopeo to a loopback
 * registry behind credentials, and the cluster's Deployment runs `<repository>@<digest>`. No kubelet runs here: the
 * tests mark pods ready as a kubelet would (test/support/kubePods.ts) and say "(simulated pod status)"; against a
 * real cluster (GRAPHX_TEST_KUBE=real) they are skipped, since its nodes cannot pull from this machine's loopback.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LABELS } from '../../src/targets/kubernetes/names';
import { MANAGED_KINDS } from '../../src/targets/kubernetes/objects';
import { makeDataDir } from '../support/env';
import {
  BUSYBOX_IMAGE,
  describeWithEngine,
  ensureBusyboxImage,
  startTestEngine,
  TEST_ENGINE_DIR,
  type TestEngine,
} from '../support/containerEngine';
import { createGitRepo } from '../support/gitRepos';
import { realClusterRequested, startTestCluster, type TestCluster } from '../support/kubeCluster';
import { graphxAccount, type GraphxAccount } from '../support/kubeFixtures';
import { keepPodsReady, simulatePods, waitForPods } from '../support/kubePods';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';
import { startRegistry, type TestRegistry } from '../support/registry';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../support/runtimeImage';
import { killWorkerProcess, startWorkerProcess } from '../support/workerProcess';

jest.setTimeout(600_000);

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const PYTHON_FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo-py');
const settled = (status: string) => ['DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(status);
const describeLocal = realClusterRequested() ? describe.skip : describeWithEngine;

describeLocal('deployments on Kubernetes through the whole pipeline (GRAPHX_RUNNER=kubernetes)', () => {
  let engine: TestEngine;
  let registry: TestRegistry;
  let cluster: TestCluster;
  let account: GraphxAccount;
  let namespace: string;
  let authFile: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    await ensureTestRuntimeImage(engine.engine);
    await ensureBusyboxImage(engine.engine);
    registry = await startRegistry(true);
    const { username, password } = registry.credentials!;
    authFile = path.join(makeDataDir('kube-push-auth'), 'auth.json');
    fs.writeFileSync(
      authFile,
      JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } }),
    );
    cluster = await startTestCluster();
    account = await graphxAccount(cluster, 1);
    namespace = account.managed[0] as string;
  }, IMAGE_BUILD_HOOK_MS);

  afterAll(async () => {
    await cluster?.stop();
    await registry?.stop();
  });

  /** A control plane on the test cluster, its engine the tests' shared podman (so the runtime image is built once). */
  const kubernetesEnv = (): Record<string, string> => ({
    GRAPHX_RUNNER: 'kubernetes',
    KUBECONFIG: account.kubeconfig,
    GRAPHX_KUBE_NAMESPACE: namespace,
    GRAPHX_KUBE_BASE_DOMAIN: 'apps.test',
    GRAPHX_KUBE_INGRESS_CLASS: 'nginx',
    GRAPHX_KUBE_REGISTRY: `${registry.host}/graphx`,
    GRAPHX_KUBE_REGISTRY_AUTH_FILE: authFile,
    GRAPHX_KUBE_REGISTRY_TLS_VERIFY: '0',
  });
  const kubernetesStack = (env: Record<string, string> = {}, worker = true) =>
    startPipelineStack({
      worker,
      env: {
        ...kubernetesEnv(),
        GRAPHX_CONTAINER_SOCKET: engine.service.socketPath,
        GRAPHX_CONTAINER_STORE: path.join(TEST_ENGINE_DIR, 'store'),
        ...env,
      },
    });

  const selectorOf = (deploymentId: string) => `${LABELS.deployment}=${deploymentId}`;
  const deploymentObject = async (deploymentId: string) =>
    (await account.api.list('apps/v1', 'Deployment', namespace, { labelSelector: selectorOf(deploymentId) })) as any[];
  /** The digest the registry serves for a reference, read with the push credentials. */
  const registryDigest = (ref: string) =>
    JSON.parse(
      execFileSync('skopeo', ['inspect', '--tls-verify=false', '--authfile', authFile, `docker://${ref}`], {
        encoding: 'utf8',
        env: { ...process.env, ...engine.files.env },
      }),
    ).Digest as string;

  async function deployed(pipeline: PipelineStack, deploymentId: string, revisionId: string) {
    await pipeline.waitForRevision(deploymentId, revisionId, settled, 480_000);
    const revision = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
    return revision;
  }

  const revisionLog = async (pipeline: PipelineStack, deploymentId: string, revisionId: string) =>
    (
      (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?limit=1000`)).body.logs as {
        message: string;
      }[]
    )
      .map((line) => line.message)
      .join('\n');

  async function deleteAndExpectNoObject(pipeline: PipelineStack, deploymentId: string) {
    expect((await pipeline.api('DELETE', `/v2/deployments/${deploymentId}`)).status).toBe(204);
    const deadline = Date.now() + 120_000;
    while ((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status !== 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status).toBe(404);
    for (const { apiVersion, kind } of [
      ...MANAGED_KINDS.filter((managed) => managed.kind !== 'HTTPRoute'),
      { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
      { apiVersion: 'v1', kind: 'Pod' },
    ]) {
      const left = await cluster.admin.list(apiVersion, kind, namespace, { labelSelector: selectorOf(deploymentId) });
      expect(`${kind}: ${left.length}`).toBe(`${kind}: 0`);
    }
  }

  describe('codehost, cloud mode', () => {
    let pipeline: PipelineStack;
    beforeAll(async () => {
      pipeline = await kubernetesStack();
    });
    afterAll(async () => {
      await pipeline?.stop();
    });

    it('builds, pushes and rolls out a repository by digest; a new revision rolls; a redeploy restores the earlier digest; delete leaves no object (simulated pod status)', async () => {
      const repo = createGitRepo(FIXTURE);
      const name = `kube-${crypto.randomBytes(3).toString('hex')}`;
      const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId));
      try {
        // First revision: built in the engine as for containers, pushed, applied, rolled out.
        const first = await deployed(pipeline, deploymentId, created.body.latest_revision_id);
        const firstRef = first.source_revision_config.image_ref as string;
        expect(firstRef).toMatch(new RegExp(`^${registry.host}/graphx/${name}-[0-9a-f]{12}@sha256:[0-9a-f]{64}$`));
        expect(first.source_revision_config.image_digest).toBe(firstRef.split('@')[1]);
        expect(registryDigest(firstRef)).toBe(first.source_revision_config.image_digest);
        const firstLog = await revisionLog(pipeline, deploymentId, first.id);
        expect(firstLog).toMatch(/Building image localhost\/graphx-app-/);
        expect(firstLog).toContain(`Pushed ${firstRef}`);
        expect(firstLog).toMatch(/Applied \d+ objects to namespace /);
        const deployment = (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
        expect(deployment.url).toBe(`https://${name}.apps.test`);
        let [object] = await deploymentObject(deploymentId);
        expect(object.spec.template.spec.containers[0].image).toBe(firstRef);
        for (const [apiVersion, kind] of [
          ['v1', 'Service'],
          ['networking.k8s.io/v1', 'Ingress'],
          ['networking.k8s.io/v1', 'NetworkPolicy'],
          ['v1', 'Secret'],
        ] as const) {
          const found = await account.api.list(apiVersion, kind, namespace, { labelSelector: selectorOf(deploymentId) });
          expect(`${kind}: ${found.length}`).toBe(`${kind}: 1`);
        }

        // A code change: a new revision, a new image digest, rolled onto the same Deployment.
        repo.branch('v2', true);
        repo.commit('v2', { 'src/v2.txt': 'v2\n' });
        repo.checkout('main');
        const patched = await pipeline.api('PATCH', `/v2/deployments/${deploymentId}`, {
          source_revision_config: { repo_ref: 'v2' },
        });
        expect(patched.status).toBe(200);
        const second = await deployed(pipeline, deploymentId, patched.body.latest_revision_id);
        const secondRef = second.source_revision_config.image_ref as string;
        expect(secondRef).not.toBe(firstRef);
        expect(secondRef.split('@')[0]).toBe(firstRef.split('@')[0]);
        const objects = await deploymentObject(deploymentId);
        expect(objects).toHaveLength(1);
        object = objects[0];
        expect(object.spec.template.spec.containers[0].image).toBe(secondRef);
        expect(object.spec.template.metadata.labels[LABELS.revision]).toBe(second.id);

        // Rollback: a redeploy of the first revision runs its digest again, with nothing cloned, built or pushed.
        const redeployed = await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${first.id}/redeploy`);
        expect(redeployed.status).toBe(200);
        const third = await deployed(pipeline, deploymentId, redeployed.body.latest_revision_id);
        expect(third.source_revision_config.image_ref).toBe(firstRef);
        const thirdLog = await revisionLog(pipeline, deploymentId, third.id);
        expect(thirdLog).toContain('nothing was rebuilt or pushed');
        expect(thirdLog).not.toMatch(/Building image|Pushing /);
        [object] = await deploymentObject(deploymentId);
        expect(object.spec.template.spec.containers[0].image).toBe(firstRef);
        expect(object.spec.template.metadata.labels[LABELS.revision]).toBe(third.id);
      } finally {
        await ready();
      }
      await deleteAndExpectNoObject(pipeline, deploymentId);
    });
  });

  describe('a Python repository, cloud mode', () => {
    let pipeline: PipelineStack;
    beforeAll(async () => {
      pipeline = await kubernetesStack();
    });
    afterAll(async () => {
      await pipeline?.stop();
    });

    it('builds the Python layer, pushes the image by digest, and the Deployment runs the image that carries the environment (simulated pod status)', async () => {
      const repo = createGitRepo(PYTHON_FIXTURE);
      const name = `kube-py-${crypto.randomBytes(3).toString('hex')}`;
      const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId));
      try {
        const revision = await deployed(pipeline, deploymentId, created.body.latest_revision_id);
        const ref = revision.source_revision_config.image_ref as string;
        expect(registryDigest(ref)).toBe(revision.source_revision_config.image_digest);
        const log = await revisionLog(pipeline, deploymentId, revision.id);
        expect(log).toContain(`Pushed ${ref}`);
        // The pushed image (read back from the registry, not the local store) runs the app with its own environment.
        const config = JSON.parse(
          execFileSync('skopeo', ['inspect', '--config', '--tls-verify=false', '--authfile', authFile, `docker://${ref}`], {
            encoding: 'utf8',
            env: { ...process.env, ...engine.files.env },
          }),
        ) as { config: { Env?: string[] } };
        expect(config.config.Env).toContain('GRAPHX_PYTHON=/home/graphx/python-env/bin/python');
        const [object] = await deploymentObject(deploymentId);
        expect(object.spec.template.spec.containers[0].image).toBe(ref);
      } finally {
        await ready();
      }
      await deleteAndExpectNoObject(pipeline, deploymentId);
    });
  });

  describe('external_docker, self_hosted mode', () => {
    let pipeline: PipelineStack;
    beforeAll(async () => {
      pipeline = await kubernetesStack({ GRAPHX_DEPLOYMENT_MODE: 'self_hosted' });
    });
    afterAll(async () => {
      await pipeline?.stop();
    });

    it("copies an image_uri (read with graphx's registry credentials) to the cluster's registry and runs it by digest; a redeploy reuses that digest (simulated pod status)", async () => {
      const upstream = registry.push(engine.files, BUSYBOX_IMAGE, `upstream/busybox-${crypto.randomBytes(3).toString('hex')}:1`);
      const name = `pull-${crypto.randomBytes(3).toString('hex')}`;
      const created = await pipeline.api('POST', '/v2/deployments', {
        name,
        source: 'external_docker',
        source_config: {},
        source_revision_config: { image_uri: upstream },
        secrets: [],
      });
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId));
      try {
        const first = await deployed(pipeline, deploymentId, created.body.latest_revision_id);
        const ref = first.source_revision_config.image_ref as string;
        expect(ref).toMatch(new RegExp(`^${registry.host}/graphx/${name}-[0-9a-f]{12}@sha256:[0-9a-f]{64}$`));
        // A copy of the same manifest: the digest is the upstream image's.
        expect(first.source_revision_config.image_digest).toBe(registryDigest(upstream));
        const [object] = await deploymentObject(deploymentId);
        expect(object.spec.template.spec.containers[0].image).toBe(ref);

        const redeployed = await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${first.id}/redeploy`);
        const second = await deployed(pipeline, deploymentId, redeployed.body.latest_revision_id);
        expect(second.source_revision_config.image_ref).toBe(ref);
        expect(await revisionLog(pipeline, deploymentId, second.id)).toContain('nothing was rebuilt or pushed');
      } finally {
        await ready();
      }
      await deleteAndExpectNoObject(pipeline, deploymentId);
    });
  });

  describe('`graphx worker` processes as the manifests run them: a control worker without an engine, a build worker', () => {
    let pipeline: PipelineStack;
    const workers: ChildProcess[] = [];
    beforeAll(async () => {
      // The API alone (as deploy/kubernetes/base runs it): no worker, no engine, no gateway.
      pipeline = await kubernetesStack({ GRAPHX_DEPLOYMENT_MODE: 'self_hosted' }, false);
      expect(pipeline.stack.gatewayUrl).toBeNull();
      const common = { ...kubernetesEnv(), GRAPHX_DEPLOYMENT_MODE: 'self_hosted' };
      workers.push(startWorkerProcess(pipeline, { ...common, GRAPHX_WORKER_QUEUES: 'control' }));
      workers.push(
        startWorkerProcess(pipeline, {
          ...common,
          GRAPHX_WORKER_QUEUES: 'build',
          GRAPHX_CONTAINER_SOCKET: engine.service.socketPath,
          GRAPHX_CONTAINER_STORE: path.join(TEST_ENGINE_DIR, 'store'),
        }),
      );
    });
    afterAll(async () => {
      for (const worker of workers) await killWorkerProcess(worker);
      await pipeline?.stop();
    });

    it('deploys through separate worker processes; pods that cannot pull end the next revision DEPLOY_FAILED with the reason while the first keeps serving (simulated pod status)', async () => {
      const upstream = registry.push(engine.files, BUSYBOX_IMAGE, `upstream/busybox-${crypto.randomBytes(3).toString('hex')}:1`);
      const created = await pipeline.api('POST', '/v2/deployments', {
        name: `workers-${crypto.randomBytes(3).toString('hex')}`,
        source: 'external_docker',
        source_config: {},
        source_revision_config: { image_uri: upstream },
        secrets: [],
      });
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      const firstId = created.body.latest_revision_id as string;
      const ready = keepPodsReady(cluster.admin, namespace, `${selectorOf(deploymentId)},${LABELS.revision}=${firstId}`);
      let first;
      try {
        first = await deployed(pipeline, deploymentId, firstId);
      } finally {
        await ready();
      }
      const patched = await pipeline.api('PATCH', `/v2/deployments/${deploymentId}`, {
        source_config: { resource_spec: { labels: { change: 'second' } } },
      });
      expect(patched.status).toBe(200);
      const secondId = patched.body.latest_revision_id as string;
      const pods = await waitForPods(cluster.admin, namespace, `${selectorOf(deploymentId)},${LABELS.revision}=${secondId}`);
      await simulatePods(cluster.admin, pods, 'image-pull-failure');
      await pipeline.waitForRevision(deploymentId, secondId, settled, 120_000);
      const second = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${secondId}`)).body;
      expect(second.status).toBe('DEPLOY_FAILED');
      expect(second.status_message).toMatch(/Image pull failed for container agent-server \(ImagePullBackOff\)/);
      const [object] = await deploymentObject(deploymentId);
      expect(object.spec.template.metadata.labels[LABELS.revision]).toBe(firstId);
      expect(object.spec.template.spec.containers[0].image).toBe(first.source_revision_config.image_ref);
      await deleteAndExpectNoObject(pipeline, deploymentId);
    });
  });
});
