/**
 * Python apps through the real pipeline (issue 20, point 2): the BUILD step makes the app's virtual environment
 * (dependencies from the package index, the server's packages pinned as constraints), keyed by the digest of the
 * dependencies and reused by a later build with the same ones; the app runs with it and installs nothing at start.
 * A uv workspace (graphx.json "source": {"kind": "uv"}) deploys its uv.lock on both runners, by the same test bodies.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { podmanAvailable, startTestEngine } from '../support/containerEngine';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../support/runtimeImage';
import { codehostDeployment, startPipelineStack, streamEchoRun, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo-py');
/** A uv workspace: graphx.json at its root, the app a member (packages/echo-uv) locked with humanize from the index. */
const UV_FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo-uv');
/** The member's pyproject.toml and the uv.lock `uv lock` made of it with langgraph==1.0.0. */
const OLD_LANGGRAPH_LOCK = path.resolve(__dirname, '..', 'fixtures', 'uv-locks', 'old-langgraph');
const BUILD_MS = 300_000;

/** Deploys `repo` at `ref` and waits for the revision to settle; returns the revision and its build log. */
async function deploy(pipeline: PipelineStack, repo: GitRepo, ref = 'main') {
  const name = `py-${crypto.randomBytes(3).toString('hex')}`;
  const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url, { repoRef: ref }));
  expect(created.status).toBe(201);
  const { id, latest_revision_id: revisionId } = created.body;
  await pipeline.waitForRevision(id, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'), BUILD_MS);
  const revision = (await pipeline.api('GET', `/v2/deployments/${id}/revisions/${revisionId}`)).body;
  const logs = await pipeline.api('GET', `/v2/deployments/${id}/revisions/${revisionId}/logs?limit=500`);
  const messages = (logs.body.logs as Array<{ message: string }>).map((entry) => entry.message);
  const deployment = (await pipeline.api('GET', `/v2/deployments/${id}`)).body;
  return { revision, messages, url: deployment.url as string, revisionId: revisionId as string };
}

const answerOf = async (pipeline: PipelineStack, url: string) =>
  (await streamEchoRun(url, pipeline.apiKey, 'hello')).find((event) => event.event === 'updates')?.data;

/** The uv workspace's tests, the same bodies on both runners (`stack` is the runner's, set by its beforeAll). */
function uvProjectTests(runner: string, stack: () => PipelineStack) {
  let repo: GitRepo;
  beforeAll(() => {
    repo = createGitRepo(UV_FIXTURE);
  });
  const member = 'packages/echo-uv';

  it(
    `${runner}: a uv workspace deploys its uv.lock (a member's locked packages from the index) and answers a run`,
    async () => {
      const { revision, messages, url } = await deploy(stack(), repo);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      // The helper read the lock: its count line, or (container runner) the engine's cache of that very step, which
      // only an earlier build of the same lock can have made. The lines about uv are printed if neither is there.
      const uvStep = messages.findIndex((message) => /uv_project\.py/.test(message));
      expect(uvStep).toBeGreaterThanOrEqual(0);
      const readTheLock = (message: string) => /^uv\.lock: \d+ locked packages for echo-uv/.test(message);
      const cachedStep = /^STEP /.test(messages[uvStep]) && /Using cache/.test(messages[uvStep + 1] ?? '');
      expect({ readTheLock: messages.some(readTheLock) || cachedStep, uvLines: messages.filter((m) => /uv/.test(m)) }).toEqual({
        readTheLock: true,
        uvLines: expect.any(Array),
      });
      // humanize comes only from the lock: the graph counts the letters with it.
      expect(await answerOf(stack(), url)).toEqual({ respond: { echo: 'echo: hello (five letters)' } });
    },
    BUILD_MS + 30_000,
  );

  it(
    `${runner}: a uv.lock out of date with pyproject.toml fails BUILD_FAILED with uv's message`,
    async () => {
      repo.branch(`${runner}-stale-lock`, true);
      const manifest = fs.readFileSync(path.join(UV_FIXTURE, member, 'pyproject.toml'), 'utf8');
      repo.commit('a dependency without uv lock', {
        [`${member}/pyproject.toml`]: manifest.replace('"humanize>=4"', '"humanize>=4", "six"'),
      });
      repo.checkout('main');
      const { revision } = await deploy(stack(), repo, `${runner}-stale-lock`);
      expect(revision.status).toBe('BUILD_FAILED');
      expect(revision.status_message).toMatch(/The lockfile at `uv\.lock` needs to be updated, but `--locked` was provided/);
    },
    BUILD_MS,
  );

  it(
    `${runner}: "pip_installer": "uv" installs plain dependencies with uv, reaches DEPLOYED and answers a run`,
    async () => {
      const pyRepo = createGitRepo(FIXTURE);
      const config = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'graphx.json'), 'utf8'));
      pyRepo.commit('install with uv', { 'graphx.json': JSON.stringify({ ...config, pip_installer: 'uv' }) });
      const { revision, messages, url } = await deploy(stack(), pyRepo);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      expect(messages.some((message) => /uv pip install --python \S+ -r \S+requirements\.txt -c /.test(message))).toBe(true);
      expect(await answerOf(stack(), url)).toEqual({ respond: { echo: 'echo: hello' } });
    },
    BUILD_MS + 30_000,
  );

  it(
    `${runner}: a uv.lock pinning langgraph to another version than the server's fails BUILD_FAILED naming it`,
    async () => {
      repo.branch(`${runner}-old-langgraph`, true);
      repo.commit('lock langgraph 1.0.0', {
        [`${member}/pyproject.toml`]: fs.readFileSync(path.join(OLD_LANGGRAPH_LOCK, 'pyproject.toml'), 'utf8'),
        'uv.lock': fs.readFileSync(path.join(OLD_LANGGRAPH_LOCK, 'uv.lock'), 'utf8'),
      });
      repo.checkout('main');
      const { revision } = await deploy(stack(), repo, `${runner}-old-langgraph`);
      expect(revision.status).toBe('BUILD_FAILED');
      expect(revision.status_message).toMatch(
        /uv\.lock pins langgraph 1\.0\.0, which is reserved: the server relies on langgraph \d+\.\d+/,
      );
    },
    BUILD_MS,
  );
}

/** A FastAPI app (graphx.json `http.app`) beside the echo graph, on a branch of `repo()`. */
const FASTAPI_APP = `from fastapi import FastAPI
from fastapi.responses import StreamingResponse

app = FastAPI()


@app.get("/custom/hello")
async def hello(name: str = "world"):
    return {"hello": name}


@app.get("/custom/count")
async def count():
    async def numbers():
        for number in range(3):
            yield f"data: {number}\\n\\n"

    return StreamingResponse(numbers(), media_type="text/event-stream")
`;

/** A Python `http.app` deployed through the pipeline, the same bodies on both runners. */
function httpAppTests(runner: string, stack: () => PipelineStack, repo: () => GitRepo) {
  it(
    `${runner}: a FastAPI http.app is built with its dependencies and serves its routes at the deployment URL beside the API`,
    async () => {
      const config = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'graphx.json'), 'utf8'));
      repo().branch(`${runner}-fastapi`, true);
      repo().commit('a FastAPI app', {
        'src/echo_py/api.py': FASTAPI_APP,
        'graphx.json': JSON.stringify({ ...config, dependencies: ['.', 'fastapi'], http: { app: './src/echo_py/api.py:app' } }),
      });
      repo().checkout('main');
      const { revision, url } = await deploy(stack(), repo(), `${runner}-fastapi`);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      const headers = { 'X-Api-Key': stack().apiKey };
      expect(await (await fetch(`${url}/custom/hello?name=ada`, { headers })).json()).toEqual({ hello: 'ada' });
      expect(await (await fetch(`${url}/custom/count`, { headers })).text()).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
      // The app's routes are listed with the API's, and the API answers what the app does not own.
      const document = (await (await fetch(`${url}/openapi.json`, { headers })).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/custom/hello', '/threads']));
      expect(await answerOf(stack(), url)).toEqual({ respond: { echo: 'echo: hello' } });
    },
    BUILD_MS + 30_000,
  );
}

describe('Python apps with the process runner', () => {
  let pipeline: PipelineStack;
  let repo: GitRepo;
  beforeAll(async () => {
    // Builds may use Debian's 3.11 only, so a python_version this runner cannot provide is at hand.
    pipeline = await startPipelineStack({ env: { GRAPHX_PYTHON_INTERPRETERS: '/usr/bin/python3.11' } });
    repo = createGitRepo(FIXTURE);
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  it(
    'builds the environment in the BUILD step, reaches DEPLOYED and answers a run, installing nothing at start',
    async () => {
      const { revision, messages, url, revisionId } = await deploy(pipeline, repo);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      expect(messages.some((message) => /^Python environment \w+ (built|reused)/.test(message))).toBe(true);
      expect(await answerOf(pipeline, url)).toEqual({ respond: { echo: 'echo: hello' } });
      // An app that built its own environment at start would have left it in the app's .graphx/.
      expect(fs.existsSync(path.join(pipeline.dataDir, 'builds', revisionId, 'src', '.graphx'))).toBe(false);
    },
    BUILD_MS + 30_000,
  );

  it(
    'a later revision with the same dependencies reuses the environment and runs its own code',
    async () => {
      await deploy(pipeline, repo);
      repo.branch('other-word', true);
      repo.commit('answer hi', { 'src/echo_py/words.py': 'PREFIX = "hi"\n' });
      repo.checkout('main');
      const { revision, messages, url } = await deploy(pipeline, repo, 'other-word');
      expect(revision.status).toBe('DEPLOYED');
      expect(messages.some((message) => /^Python environment \w+ reused/.test(message))).toBe(true);
      expect(messages.some((message) => message.startsWith('$ pip install'))).toBe(false);
      expect(await answerOf(pipeline, url)).toEqual({ respond: { echo: 'hi: hello' } });
    },
    2 * BUILD_MS,
  );

  it(
    'fails BUILD_FAILED naming a dependency that would replace a package the server relies on',
    async () => {
      repo.branch('old-langgraph', true);
      const config = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'graphx.json'), 'utf8'));
      repo.commit('pin an old langgraph', {
        'graphx.json': JSON.stringify({ ...config, dependencies: ['.', 'langgraph==0.2.0'] }),
      });
      repo.checkout('main');
      const { revision } = await deploy(pipeline, repo, 'old-langgraph');
      expect(revision.status).toBe('BUILD_FAILED');
      expect(revision.status_message).toMatch(
        /"dependencies": "langgraph==0\.2\.0" is reserved: the server relies on langgraph \d/,
      );
    },
    BUILD_MS,
  );

  it(
    'fails BUILD_FAILED naming a python_version this runner cannot provide and the versions it can',
    async () => {
      repo.branch('python-3.13', true);
      const config = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'graphx.json'), 'utf8'));
      repo.commit('ask for 3.13', { 'graphx.json': JSON.stringify({ ...config, python_version: '3.13' }) });
      repo.checkout('main');
      const { revision } = await deploy(pipeline, repo, 'python-3.13');
      expect(revision.status).toBe('BUILD_FAILED');
      expect(revision.status_message).toMatch(/"python_version" 3\.13 cannot be provided here: available 3\.11\b/);
    },
    BUILD_MS,
  );

  describe('an http.app', () => {
    httpAppTests(
      'process',
      () => pipeline,
      () => repo,
    );
  });

  describe('a uv project', () => {
    uvProjectTests('process', () => pipeline);

    it(
      'a later revision with the same uv.lock reuses the environment, checks the lock again and runs its own code',
      async () => {
        const uvRepo = createGitRepo(UV_FIXTURE);
        await deploy(pipeline, uvRepo);
        uvRepo.branch('uv-word', true);
        uvRepo.commit('answer hi', { 'packages/echo-uv/src/echo_uv/words.py': 'PREFIX = "hi"\n' });
        uvRepo.checkout('main');
        const { revision, messages, url } = await deploy(pipeline, uvRepo, 'uv-word');
        expect(revision.status).toBe('DEPLOYED');
        expect(messages.some((message) => /^Python environment \w+ reused/.test(message))).toBe(true);
        expect(messages.some((message) => message.includes('uv_project.py --check-only'))).toBe(true);
        expect(await answerOf(pipeline, url)).toEqual({ respond: { echo: 'hi: hello (five letters)' } });
      },
      2 * BUILD_MS,
    );
  });
});

(podmanAvailable() ? describe : describe.skip)('Python apps with the container runner (images built by podman)', () => {
  let pipeline: PipelineStack;
  let repo: GitRepo;
  beforeAll(async () => {
    const engine = await startTestEngine();
    await ensureTestRuntimeImage(engine.engine);
    pipeline = await startPipelineStack({
      env: { GRAPHX_RUNNER: 'container', GRAPHX_CONTAINER_SOCKET: engine.service.socketPath },
    });
    repo = createGitRepo(FIXTURE);
  }, IMAGE_BUILD_HOOK_MS);
  afterAll(async () => {
    await pipeline?.stop();
  });

  it(
    'installs the dependencies in a layer of their own, reaches DEPLOYED and answers a run',
    async () => {
      const { revision, messages, url } = await deploy(pipeline, repo);
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      expect(
        messages.some((message) => message.includes('-m pip install -r /opt/graphx/packages/runtime/python/requirements.txt')),
      ).toBe(true);
      expect(await answerOf(pipeline, url)).toEqual({ respond: { echo: 'echo: hello' } });
    },
    BUILD_MS + 30_000,
  );

  it(
    'a code-only change finds the environment layer cached and runs its own code',
    async () => {
      repo.branch('container-word', true);
      repo.commit('answer hey', { 'src/echo_py/words.py': 'PREFIX = "hey"\n' });
      repo.checkout('main');
      const { revision, messages, url } = await deploy(pipeline, repo, 'container-word');
      expect(revision.status).toBe('DEPLOYED');
      const pipStep = messages.findIndex((message) => message.includes('-m pip install -r'));
      expect(pipStep).toBeGreaterThanOrEqual(0);
      expect(messages[pipStep + 1]).toMatch(/Using cache/);
      expect(await answerOf(pipeline, url)).toEqual({ respond: { echo: 'hey: hello' } });
    },
    BUILD_MS + 30_000,
  );

  it(
    'fails BUILD_FAILED naming a python_version the image cannot provide and the versions it can',
    async () => {
      repo.branch('container-3.12', true);
      const config = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'graphx.json'), 'utf8'));
      repo.commit('ask for 3.12', { 'graphx.json': JSON.stringify({ ...config, python_version: '3.12' }) });
      repo.checkout('main');
      const { revision } = await deploy(pipeline, repo, 'container-3.12');
      expect(revision.status).toBe('BUILD_FAILED');
      expect(revision.status_message).toMatch(/"python_version" 3\.12 cannot be provided by this image: available 3\.11/);
    },
    BUILD_MS,
  );

  describe('an http.app', () => {
    httpAppTests(
      'container',
      () => pipeline,
      () => repo,
    );
  });

  describe('a uv project', () => {
    uvProjectTests('container', () => pipeline);
  });
});
