/**
 * The build step with the container runner, on real podman, a real loopback registry (docker-registry) and the
 * real npm registry: a codehost clone becomes a revision image (dependency layer cached across code-only changes),
 * the image serves the agent server API, and image sources pull `image_uri` with or without credentials.
 */
import type { ImageBuilder } from '../../../src/builders/image/imageBuilder';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createActivities } from '../../../activities';
import type { HeartbeatDetails } from '../../../activities/support/progress';
import { RevisionImages } from '../../../src/containers/revisionImages';
import { toRevision } from '../../../src/db/repositories/revisions';
import { revisionView } from '../../../src/deployments/views';
import { findFreePort, waitFor } from '@graphx/kit/net/ports';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import { describeWithEngine, ensureBusyboxImage, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { testEnv } from '../../support/env';
import { createGitRepo, type GitRepo } from '../../support/gitRepos';
import { startRegistry, type TestRegistry } from '../../support/registry';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';
import {
  activityEnv,
  createDeployment,
  createTestDeps,
  withImageBuilder,
  type RevisionOptions,
  type TestDeps,
} from '../activities/pipelineFixtures';

// A first run on a machine builds the base and runtime images and fills the npm layer (minutes); later runs reuse them.
jest.setTimeout(600_000);

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'pipeline-echo');
const BUILD_SECRET = `build-secret-${crypto.randomBytes(6).toString('hex')}`;

describeWithEngine('revision images (container runner build step)', () => {
  let test: TestEngine;
  let deps: TestDeps & { builder: ImageBuilder };
  let repo: GitRepo;
  const containers: string[] = [];
  const images: string[] = [];

  beforeAll(async () => {
    test = await startTestEngine();
    const runtime = await ensureTestRuntimeImage(test.engine);
    deps = withImageBuilder(
      createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '300' }),
      new RevisionImages(
        test.engine,
        runtime.ref,
        undefined,
        async (nodeMajor) => (await ensureTestRuntimeImage(test.engine, nodeMajor)).ref,
      ),
    );
    repo = createGitRepo(FIXTURE);
    // A TypeScript graph too: the image compiles it at build time, so the app starts on a read-only root filesystem.
    repo.commit('typed graph', {
      'src/typed.ts': "import { graph as echo } from './graph.js';\nexport const graph: typeof echo = echo;\n",
      'graphx.json': JSON.stringify({ graphs: { agent: './src/graph.js:graph', typed: './src/typed.ts:graph' } }),
    });
  }, IMAGE_BUILD_HOOK_MS);

  afterAll(async () => {
    for (const name of containers) await test.engine.removeContainer(name);
    for (const ref of images) await test.engine.removeImage(ref);
    await deps.close();
  });

  /** Runs clone and build of a revision; returns the build's heartbeats and log. */
  const cloneAndBuild = async (ref: { revisionId: string; deploymentId: string }) => {
    const activities = createActivities(deps);
    const heartbeats: HeartbeatDetails[] = [];
    await activityEnv().run(activities.cloneRepository, ref);
    const env = activityEnv();
    env.on('heartbeat', (details: HeartbeatDetails) => heartbeats.push(details));
    const outcome = await env.run(activities.buildApplication, ref).then(
      () => null,
      (error: Error) => error,
    );
    const log = (await deps.db('revision_logs').where({ revision_id: ref.revisionId }).orderBy('id').pluck('message')).join('\n');
    const spec = await loadRevisionSpec(deps.db, deps.secretBox, ref.revisionId);
    if (spec.image && spec.source === 'codehost') images.push(spec.image.ref);
    return { heartbeats, log, spec, outcome };
  };

  /** The log lines of the step running `needle` and the line that follows it (podman: `--> Using cache <id>`). */
  const stepResult = (log: string, needle: string) => {
    const lines = log.split('\n');
    const at = lines.findIndex((line) => /^STEP \d+\/\d+: RUN/.test(line) && line.includes(needle));
    return at === -1 ? null : (lines[at + 1] ?? '');
  };

  let firstImage = '';

  it('builds a codehost revision into an image recorded on the revision, its response and its heartbeat', async () => {
    const deployment = await createDeployment(deps.db, deps.secretBox, {
      repoUrl: repo.url,
      // Proves the secret reached the build without writing its value anywhere: the log shows only its length.
      buildCommand: 'echo "build token length ${#BUILD_TOKEN}" && echo built > built.txt',
      secrets: [{ name: 'BUILD_TOKEN', value: BUILD_SECRET }],
    });
    const { heartbeats, log, spec, outcome } = await cloneAndBuild(deployment);
    expect(outcome).toBeNull();
    expect(spec.image?.ref).toBe(RevisionImages.tagFor(deployment.deploymentId, deployment.revisionId));
    expect(spec.image?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(log).toContain('STEP 1/');
    expect(log).toMatch(/compiled src\/typed\.ts to \.typed\.[0-9a-f]+\.graphx\.mjs/);
    expect(log).toContain(`build token length ${BUILD_SECRET.length}`);
    expect(stepResult(log, 'npm ci')).not.toBeNull();
    const row = await deps.db('revisions').where({ id: deployment.revisionId }).first();
    expect(revisionView(toRevision(row), []).source_revision_config).toMatchObject({
      image_ref: spec.image?.ref,
      image_digest: spec.image?.digest,
    });
    expect(heartbeats.at(-1)?.image).toEqual(spec.image);
    firstImage = spec.image!.ref;
  });

  it("keeps build secrets out of the image's layers, history and environment", () => {
    const podman = (...args: string[]) =>
      execFileSync('podman', args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...test.files.env }, encoding: 'utf8' });
    const history = podman('history', '--no-trunc', '--format', '{{.CreatedBy}}', firstImage);
    expect(history).toContain('npm ci');
    expect(history).not.toContain(BUILD_SECRET);
    expect(podman('image', 'inspect', '--format', '{{json .Config.Env}}', firstImage)).not.toContain(BUILD_SECRET);
    expect(podman('image', 'inspect', '--format', '{{.Config.User}}', firstImage).trim()).toBe('10001:10001');
  });

  it('reuses the dependency layer for a code-only change: the install step is a cache hit in the build log', async () => {
    repo.commit('change code only', {
      'src/graph.js': `${fs.readFileSync(path.join(FIXTURE, 'src', 'graph.js'), 'utf8')}\n// changed\n`,
    });
    const second = await cloneAndBuild(await createDeployment(deps.db, deps.secretBox, { repoUrl: repo.url }));
    expect(second.outcome).toBeNull();
    expect(stepResult(second.log, 'npm ci')).toMatch(/Using cache/);
    // The repository layer is not: the code changed.
    expect(second.log).toMatch(/COPY --chown=10001:10001 repo\/ \/app\/\n(?!--> Using cache)/);
  });

  it(
    'runs the default LTS (Node 24) whatever the host runs, and graphx.json node_version 22 picks Node 22',
    async () => {
      const nodeOf = async (image: string) => {
        const name = `graphx-node-version-${crypto.randomBytes(4).toString('hex')}`;
        containers.push(name);
        await test.engine.runContainer({ name, image, cmd: ['node', '--version'], network: 'none' });
        await test.engine.waitContainer(name);
        return (await test.engine.containerLogs(name, 5)).trim();
      };
      expect(await nodeOf(firstImage)).toMatch(/^v24\./);
      const pinned = createGitRepo(FIXTURE);
      pinned.commit('Node 22', {
        'graphx.json': JSON.stringify({ node_version: '22', graphs: { agent: './src/graph.js:graph' } }),
      });
      const built = await cloneAndBuild(await createDeployment(deps.db, deps.secretBox, { repoUrl: pinned.url }));
      expect(built.outcome).toBeNull();
      expect(built.log).toMatch(/on localhost\/graphx-runtime:[^ ]+ \(Node 22\)/);
      expect(await nodeOf(built.spec.image!.ref)).toMatch(/^v22\./);
    },
    IMAGE_BUILD_HOOK_MS,
  );

  it('runs a built image as the agent server on a read-only root filesystem: GET /ok answers on $PORT', async () => {
    const database = `graphx_image_app_${crypto.randomBytes(4).toString('hex')}`;
    await deps.db.raw(`CREATE DATABASE "${database}"`);
    const databaseUri = new URL(testEnv.databaseUrl());
    databaseUri.pathname = `/${database}`;
    const port = await findFreePort();
    const name = `graphx-image-ok-${process.pid}`;
    containers.push(name);
    try {
      // The host network only so this test's container reaches the test PostgreSQL on 127.0.0.1; the container
      // target gives apps their database another way (docs/internal-contracts.md).
      await test.engine.runContainer({
        name,
        image: firstImage,
        network: 'host',
        readOnlyRootfs: true,
        tmpfs: { '/tmp': 'rw,size=64m,mode=1777' },
        env: {
          PORT: String(port),
          HOST: '127.0.0.1',
          DATABASE_URI: databaseUri.toString(),
          GRAPHX_CONTROL_PLANE_URL: 'http://127.0.0.1:9',
          GRAPHX_SERVICE_TOKEN: 'test-service-token',
        },
      });
      await waitFor('the image to answer /ok', async () => (await get(port, '/ok')) === 200, 90_000, 250).catch(async (error) => {
        throw new Error(`${(error as Error).message}\n${await test.engine.containerLogs(name, 30)}`);
      });
    } finally {
      await test.engine.removeContainer(name);
      await deps.db.raw(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  });

  it("interrupting a revision stops its image build: the activity ends and the build step's process is gone", async () => {
    const sleeper = `sleep ${1000 + crypto.randomInt(8000)}`;
    const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl: repo.url, buildCommand: sleeper });
    const activities = createActivities(deps);
    await activityEnv().run(activities.cloneRepository, deployment);
    const env = activityEnv();
    const running = env.run(activities.buildApplication, deployment).then(
      () => null,
      (error: Error) => error,
    );
    const processRuns = () => commandRuns(sleeper);
    await waitFor('the build step to run', async () => processRuns(), 120_000, 200);
    env.cancel();
    const outcome = await running;
    expect(outcome?.name).toBe('CancelledFailure');
    await waitFor('the build step to be stopped', async () => !processRuns(), 20_000, 200);
  });

  it('a re-run of a build whose worker died stops the step the dead attempt left running, then builds', async () => {
    const sleeper = `sleep ${1000 + crypto.randomInt(8000)}`;
    const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl: repo.url, buildCommand: sleeper });
    const activities = createActivities(deps);
    await activityEnv().run(activities.cloneRepository, deployment);
    // Nobody cancels the first attempt, as when its worker was killed: the engine goes on building.
    const abandoned = activityEnv()
      .run(activities.buildApplication, deployment)
      .then(
        () => null,
        (error: Error) => error,
      );
    await waitFor("the first attempt's step to run", async () => commandRuns(sleeper), 120_000, 200);
    await deps
      .db('revisions')
      .where({ id: deployment.revisionId })
      .update({ source_config: deps.db.raw(`source_config || '{"build_command": "echo second attempt"}'::jsonb`) });
    const second = await cloneAndBuild(deployment);
    expect(second.outcome).toBeNull();
    expect(second.log).toContain('Stopped the build an earlier attempt left running.');
    expect(commandRuns(sleeper)).toBe(false);
    expect((await abandoned)?.message).toContain('The image build');
  });

  it('a build step that prints nothing and uses no CPU is stopped after GRAPHX_BUILD_STALL_SECONDS, naming where it stopped', async () => {
    const watched = withImageBuilder(
      createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '300', GRAPHX_BUILD_STALL_SECONDS: '5' }),
      deps.builder.images,
    );
    try {
      const sleeper = `sleep ${1000 + crypto.randomInt(8000)}`;
      const deployment = await createDeployment(watched.db, watched.secretBox, {
        repoUrl: repo.url,
        buildCommand: `echo waiting for a lock && ${sleeper}`,
      });
      const activities = createActivities(watched);
      await activityEnv().run(activities.cloneRepository, deployment);
      const outcome = await activityEnv()
        .run(activities.buildApplication, deployment)
        .then(
          () => null,
          (error: { type?: string; message: string }) => error,
        );
      expect(outcome).toMatchObject({
        type: 'BuildFailed',
        message: expect.stringMatching(
          /no progress for 5 s[\s\S]*stopped in its "image" phase, after:[\s\S]*waiting for a lock$/,
        ),
      });
      await waitFor('the stalled step to be stopped', async () => !commandRuns(sleeper), 20_000, 200);
    } finally {
      await watched.close();
    }
  });

  describe('image sources', () => {
    let publicRegistry: TestRegistry;
    let privateRegistry: TestRegistry;
    let publicImage: string;
    let privateImage: string;

    beforeAll(async () => {
      const local = await ensureBusyboxImage(test.engine);
      [publicRegistry, privateRegistry] = await Promise.all([startRegistry(false), startRegistry(true)]);
      publicImage = publicRegistry.push(test.files, local, 'team/agent:1');
      privateImage = privateRegistry.push(test.files, local, 'team/private-agent:1');
    });
    afterAll(async () => {
      for (const ref of [publicImage, privateImage]) if (ref) await test.engine.removeImage(ref);
      await Promise.all([publicRegistry?.stop(), privateRegistry?.stop()]);
    });

    /** An external_docker deployment whose revision pulls `imageUri`. */
    const imageRevision = async (imageUri: string, options: RevisionOptions = {}) => {
      const deployment = await createDeployment(deps.db, deps.secretBox, options);
      await deps.db('deployments').where({ id: deployment.deploymentId }).update({ source: 'external_docker' });
      await deps
        .db('revisions')
        .where({ id: deployment.revisionId })
        .update({ source: 'external_docker', source_revision_config: { image_uri: imageUri } });
      return deployment;
    };

    it('an external_docker revision skips the clone and pulls its public image_uri, recording its digest', async () => {
      await test.engine.removeImage(publicImage);
      const { spec, outcome, log } = await cloneAndBuild(await imageRevision(publicImage));
      expect(outcome).toBeNull();
      expect(log).toContain(`Nothing to clone: the revision runs image ${publicImage}`);
      expect(spec.repoCommitSha).toBeNull();
      expect(spec.image?.ref).toBe(publicImage);
      expect(spec.image?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    it('a private image fails without credentials with a message naming the image and image_pull_secrets', async () => {
      const { outcome, spec } = await cloneAndBuild(await imageRevision(privateImage));
      expect(outcome?.message).toContain(`Image ${privateImage} could not be pulled`);
      expect(outcome?.message).toContain('resource_spec.image_pull_secrets');
      expect(spec.image).toBeNull();
    });

    it('a private image pulls with the credentials of the deployment secret image_pull_secrets names', async () => {
      const { username, password } = privateRegistry.credentials!;
      const dockerConfig = JSON.stringify({ auths: { [privateRegistry.host]: { username, password } } });
      const { outcome, spec, log } = await cloneAndBuild(
        await imageRevision(privateImage, {
          secrets: [{ name: 'REGISTRY_AUTH', value: dockerConfig }],
          resourceSpec: { image_pull_secrets: [{ name: 'REGISTRY_AUTH' }] },
        }),
      );
      expect(outcome).toBeNull();
      expect(spec.image?.ref).toBe(privateImage);
      expect(log).not.toContain(password);
    });

    it('a wrong image_uri fails the build with a message naming the image', async () => {
      const wrong = `${publicRegistry.host}/team/no-such-agent:1`;
      const { outcome } = await cloneAndBuild(await imageRevision(wrong));
      expect(outcome?.message).toContain(`Image ${wrong} could not be pulled`);
    });
  });
});

/** True while a process with exactly this command line runs on this host (the engine's build steps are ours to see). */
function commandRuns(command: string): boolean {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .some((line) => line.trim() === command);
}

function get(port: number, pathname: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: pathname, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.on('timeout', () => request.destroy(new Error('timeout')));
  });
}
