/**
 * A Python app on a host whose image registry answers (issue 20). The default base there is Docker's official
 * `node:24-bookworm-slim`, which has no Python: the Python layer's `python3.11 -m venv` failed and so did every Python
 * build, on every host but an offline one. Now a Python app builds on the offline base (Debian's Python) while
 * JavaScript apps keep the registry's image.
 *
 * Real podman, a real registry (docker-registry on loopback) and a real build through PyPI; the image the registry
 * serves under `library/node:24-bookworm-slim` is a stand-in (no registry of Docker's can be reached here): the
 * offline base with its Python removed, which is what Docker's image lacks.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { createActivities } from '../../../activities';
import type { ImageBuilder } from '../../../src/builders/image/imageBuilder';
import { openRevisionImages } from '../../../src/containers';
import { ensureBaseImage, OFFLINE_BASE } from '../../../src/containers/baseImage';
import type { RevisionImages } from '../../../src/containers/revisionImages';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import { describeWithEngine, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { testConfig } from '../../support/env';
import { createGitRepo } from '../../support/gitRepos';
import { startRegistry, type TestRegistry } from '../../support/registry';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';
import { activityEnv, createDeployment, createTestDeps, withImageBuilder, type TestDeps } from '../activities/pipelineFixtures';

jest.setTimeout(600_000);

const PYTHON_FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'pipeline-echo-py');
const STAND_IN = `localhost/graphx-test:node${DEFAULT_NODE_MAJOR}-without-python`;

describeWithEngine("a Python app where the registry serves Docker's node image (real podman and registry)", () => {
  let test: TestEngine;
  let registry: TestRegistry;
  let images: RevisionImages;
  let offlineRuntime: string;
  let deps: (TestDeps & { builder: ImageBuilder }) | undefined;
  const containers: string[] = [];
  const log = (line: string) => process.stderr.write(`[python on a registry base] ${line}\n`);

  beforeAll(async () => {
    test = await startTestEngine();
    registry = await startRegistry(false);
    offlineRuntime = (await ensureTestRuntimeImage(test.engine)).ref;
    const offlineBase = await ensureBaseImage({ engine: test.engine, baseImage: OFFLINE_BASE, log });
    const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-node-without-python-'));
    try {
      fs.writeFileSync(
        path.join(context, 'Dockerfile'),
        `FROM ${offlineBase}\nRUN rm -f /usr/bin/python3 /usr/bin/python3.* && ! command -v python3.11\n`,
      );
      await test.engine.buildImage({ contextDir: context, tag: STAND_IN });
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
    const registryBase = registry.push(test.files, STAND_IN, `library/node:${DEFAULT_NODE_MAJOR}-bookworm-slim`);
    const config = testConfig({ GRAPHX_RUNNER: 'container', GRAPHX_RUNTIME_BASE_IMAGE: registryBase });
    images = await openRevisionImages(test.engine, config, log);
  }, IMAGE_BUILD_HOOK_MS);

  afterAll(async () => {
    for (const name of containers) await test?.engine.removeContainer(name);
    await deps?.close();
    await registry?.stop();
    await test?.engine.removeImage(STAND_IN);
  });

  /** Exit code and output of `python3.11 -m venv` (the Python layer's first command) in a container of `image`. */
  const makeVenv = async (image: string) => {
    const name = `graphx-venv-${crypto.randomBytes(4).toString('hex')}`;
    containers.push(name);
    await test.engine.runContainer({
      name,
      image,
      cmd: ['sh', '-c', 'python3.11 -m venv /tmp/env && /tmp/env/bin/python -c "print(\'venv ok\')"'],
      network: 'none',
    });
    return { code: await test.engine.waitContainer(name), output: await test.engine.containerLogs(name, 20) };
  };

  it('JavaScript apps keep the registry image; a Python app gets a runtime image in which its venv is made', async () => {
    expect(images.runtimeImageRef).not.toBe(offlineRuntime);
    expect(await images.runtimeImageFor(DEFAULT_NODE_MAJOR, log, false)).toBe(images.runtimeImageRef);
    expect((await makeVenv(images.runtimeImageRef)).code).not.toBe(0);
    const forPython = await images.runtimeImageFor(DEFAULT_NODE_MAJOR, log, true);
    expect(forPython).toBe(offlineRuntime);
    expect(await makeVenv(forPython)).toMatchObject({ code: 0, output: expect.stringContaining('venv ok') });
  });

  it('a Python app builds (its environment from PyPI) and its image has the environment', async () => {
    deps = withImageBuilder(createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '500' }), images);
    const repo = createGitRepo(PYTHON_FIXTURE);
    const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl: repo.url });
    const activities = createActivities(deps);
    await activityEnv().run(activities.cloneRepository, deployment);
    const outcome = await activityEnv()
      .run(activities.buildApplication, deployment)
      .then(
        () => null,
        (error: Error) => error.message,
      );
    const buildLog = (
      await deps.db('revision_logs').where({ revision_id: deployment.revisionId }).orderBy('id').pluck('message')
    ).join('\n');
    expect({ outcome, tail: outcome ? buildLog.slice(-2000) : '' }).toEqual({ outcome: null, tail: '' });
    const spec = await loadRevisionSpec(deps.db, deps.secretBox, deployment.revisionId);
    const name = `graphx-python-app-${crypto.randomBytes(4).toString('hex')}`;
    containers.push(name);
    await test.engine.runContainer({
      name,
      image: spec.image!.ref,
      cmd: ['sh', '-c', '"$GRAPHX_PYTHON" -c "import langgraph.graph; print(\'langgraph imports\')"'],
      network: 'none',
    });
    expect(await test.engine.waitContainer(name)).toBe(0);
    expect(await test.engine.containerLogs(name, 20)).toContain('langgraph imports');
    await test.engine.removeContainer(name);
    await test.engine.removeImage(spec.image!.ref);
  });
});
