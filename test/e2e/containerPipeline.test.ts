/**
 * Issue 10's pipeline acceptance in container mode, through the public API only: a real git repository built into a
 * revision image by podman (generated Dockerfile, dependency layer keyed by the lock file), run as a confined
 * container behind the gateway, replaced on a code-only change with the dependency layer reused, and removed with
 * its image tags on delete; then, in self_hosted mode, an `external_docker` deployment pulls that image from a private
 * loopback registry with credentials named in resource_spec.image_pull_secrets and serves it. The stacks talk to the tests' shared podman service, so the base and runtime images are
 * built once per machine.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { deploymentNetworkName, LABELS } from '../../src/targets/container/containerInstances';
import { describeWithEngine, startTestEngine, type TestEngine } from '../support/containerEngine';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, streamEchoRun, type PipelineStack } from '../support/pipelineStack';
import { startRegistry, type TestRegistry } from '../support/registry';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../support/runtimeImage';

jest.setTimeout(600_000);

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const settled = (status: string) => ['DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(status);

const echo = streamEchoRun;

describeWithEngine('deployments built into images and run as containers (GRAPHX_RUNNER=container)', () => {
  let engine: TestEngine;
  let registry: TestRegistry;
  /** The code-only change's image, pushed to the private registry before its deployment is deleted. */
  let pushedImage: string | null = null;

  beforeAll(async () => {
    engine = await startTestEngine();
    // Built here, with time for a machine's first build; the stacks below then find them by content hash.
    await ensureTestRuntimeImage(engine.engine);
    registry = await startRegistry(true);
  }, IMAGE_BUILD_HOOK_MS);
  afterAll(async () => {
    await registry?.stop();
  });

  describe('codehost, cloud mode', () => {
    let pipeline: PipelineStack;
    let repo: GitRepo;

    beforeAll(async () => {
      pipeline = await startPipelineStack({
        env: { GRAPHX_RUNNER: 'container', GRAPHX_CONTAINER_SOCKET: engine.service.socketPath },
      });
      repo = createGitRepo(FIXTURE);
    });
    afterAll(async () => {
      await pipeline?.stop();
    });

    const revisionOf = async (deploymentId: string, revisionId: string) =>
      (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    const buildLog = async (deploymentId: string, revisionId: string) =>
      (
        (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?limit=1000`)).body.logs as {
          message: string;
        }[]
      )
        .map((line) => line.message)
        .join('\n');
    const containersOf = (deploymentId: string) => engine.engine.listContainers({ [LABELS.deployment]: deploymentId });
    const networkExists = (name: string) =>
      new Docker({ socketPath: engine.service.socketPath })
        .getNetwork(name)
        .inspect()
        .then(
          () => true,
          () => false,
        );

    async function settle(deploymentId: string, revisionId: string) {
      await pipeline.waitForRevision(deploymentId, revisionId, settled, 480_000);
      const revision = await revisionOf(deploymentId, revisionId);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      return revision;
    }

    it('builds a codehost repo into an image, serves it from a container, reuses the dependency layer on a code-only change, and removes both on delete', async () => {
      const name = `ctr-${crypto.randomBytes(3).toString('hex')}`;
      const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      const first = await settle(deploymentId, created.body.latest_revision_id);
      const firstImage = first.source_revision_config.image_ref as string;
      expect(firstImage).toMatch(/^localhost\/graphx-app-/);
      expect(await engine.engine.inspectImage(firstImage)).not.toBeNull();

      const deployment = (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
      expect(await echo(deployment.url, pipeline.apiKey, 'hello')).toContainEqual({
        event: 'updates',
        data: { respond: { echo: 'echo: hello' } },
      });
      const running = (await containersOf(deploymentId)).filter((container) => container.state === 'running');
      expect(running.map((container) => container.labels[LABELS.revision])).toEqual([first.id]);
      expect(await networkExists(deploymentNetworkName(deploymentId))).toBe(true);

      // A code-only change: same lock file, so the install layer comes from the cache.
      const graph = fs.readFileSync(path.join(repo.dir, 'src', 'graph.js'), 'utf8');
      repo.branch('v2', true);
      repo.commit('v2 answers with v2:', { 'src/graph.js': graph.replace('`echo: ${', '`v2: ${') });
      repo.checkout('main');
      const patched = await pipeline.api('PATCH', `/v2/deployments/${deploymentId}`, {
        source_revision_config: { repo_ref: 'v2' },
      });
      expect(patched.status).toBe(200);
      const second = await settle(deploymentId, patched.body.latest_revision_id);
      expect(await buildLog(deploymentId, second.id)).toMatch(/Using cache/);
      expect(await echo(deployment.url, pipeline.apiKey, 'again')).toContainEqual({
        event: 'updates',
        data: { respond: { echo: 'v2: again' } },
      });

      pushedImage = registry.push(engine.files, second.source_revision_config.image_ref, 'team/echo:1');
      // The push blocked the event loop for seconds: let fetch see the API close its idle keep-alive socket first.
      await new Promise((resolve) => setTimeout(resolve, 200));

      const deleted = await pipeline.api('DELETE', `/v2/deployments/${deploymentId}`);
      expect(deleted.status).toBe(204);
      const deadline = Date.now() + 120_000;
      while ((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status !== 404 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status).toBe(404);
      expect((await containersOf(deploymentId)).filter((container) => container.state === 'running')).toEqual([]);
      expect(await engine.engine.inspectImage(second.source_revision_config.image_ref)).toBeNull();
      expect(await networkExists(deploymentNetworkName(deploymentId))).toBe(false);
    });
  });

  describe('external_docker, self_hosted mode', () => {
    let pipeline: PipelineStack;

    beforeAll(async () => {
      pipeline = await startPipelineStack({
        env: {
          GRAPHX_RUNNER: 'container',
          GRAPHX_CONTAINER_SOCKET: engine.service.socketPath,
          GRAPHX_DEPLOYMENT_MODE: 'self_hosted',
        },
      });
    });
    afterAll(async () => {
      await pipeline?.stop();
    });

    it('pulls a private image_uri with the credentials its image_pull_secrets name, reaches DEPLOYED and serves /runs/stream', async () => {
      expect(pushedImage).not.toBeNull();
      // The pushed image must come from the registry, not from the store the build left it in.
      await engine.engine.removeImage(pushedImage as string);
      const { username, password } = registry.credentials as { username: string; password: string };
      const created = await pipeline.api('POST', '/v2/deployments', {
        name: `pull-${crypto.randomBytes(3).toString('hex')}`,
        source: 'external_docker',
        source_config: { resource_spec: { image_pull_secrets: [{ name: 'REGISTRY_LOGIN' }] } },
        source_revision_config: { image_uri: pushedImage },
        secrets: [{ name: 'REGISTRY_LOGIN', value: `${username}:${password}` }],
      });
      expect(created.status).toBe(201);
      const deploymentId = created.body.id as string;
      await pipeline.waitForRevision(deploymentId, created.body.latest_revision_id, settled, 300_000);
      const revision = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${created.body.latest_revision_id}`))
        .body;
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      expect(revision.source_revision_config.image_digest).toMatch(/^sha256:/);
      const deployment = (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
      expect(await echo(deployment.url, pipeline.apiKey, 'pulled')).toContainEqual({
        event: 'updates',
        data: { respond: { echo: 'v2: pulled' } },
      });
      expect(JSON.stringify(revision)).not.toContain(password);
      await pipeline.api('DELETE', `/v2/deployments/${deploymentId}`);
    });
  });
});
