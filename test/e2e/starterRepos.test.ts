/**
 * Repositories made for the anchor deploy with no setting changed: three starter-like apps (npm, yarn 1, pnpm) modelled
 * on LangChain's new-langgraphjs-project (a StateGraph in src/agent/graph.ts, its langgraph.json copied to
 * graphx.json with `"env": ".env"` while `.env` is git-ignored, documented keys such as node_version and dependencies).
 * Installs are real: yarn and pnpm are the ones the platform ships, dependencies come from the npm registry. Each
 * starter deploys with both runners: host processes, and images built by the tests' shared podman service. LangChain's
 * Python starter (new-langgraph-project, its files unchanged) deploys with both runners too.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { podmanAvailable, startTestEngine } from '../support/containerEngine';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../support/runtimeImage';
import { deployPythonStarter, PYTHON_STARTER_MS } from '../support/pythonStarter';
import { ensurePythonClientNow } from '../../packages/runtime/test/integration/support/pythonSdk';

const STARTERS = path.resolve(__dirname, '..', 'fixtures', 'starters');
const STARTS = [
  ['npm', 'npm ci'],
  ['yarn', 'yarn install --frozen-lockfile'],
  ['pnpm', 'pnpm install --frozen-lockfile'],
] as const;

async function logMessages(pipeline: PipelineStack, deploymentId: string, revisionId: string): Promise<string[]> {
  const logs = await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?limit=500`);
  return (logs.body.logs as Array<{ message: string }>).map((entry) => entry.message);
}

/**
 * Deploys a starter fixture through the public API and answers one run of its graph. `uncached`: the package.json gets
 * a description of its own, so a container build cannot take the dependency layer from the engine's cache and runs the
 * install for real (through the build's registry proxy).
 */
async function deployStarter(pipeline: PipelineStack, manager: string, installCommand: string, uncached = false): Promise<void> {
  const fixture = path.join(STARTERS, manager);
  expect(fs.existsSync(path.join(fixture, '.env'))).toBe(false);
  const repo = createGitRepo(fixture);
  if (uncached) {
    const manifest = JSON.parse(fs.readFileSync(path.join(repo.dir, 'package.json'), 'utf8'));
    manifest.description = `${manifest.description} (${crypto.randomUUID()})`;
    repo.commit('a package.json of its own', { 'package.json': `${JSON.stringify(manifest, null, 2)}\n` });
  }
  const name = `starter-${manager}-${crypto.randomBytes(3).toString('hex')}`;
  const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
  expect(created.status).toBe(201);
  const { id, latest_revision_id: revisionId } = created.body;
  await pipeline.waitForRevision(id, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'), 300_000);
  const revision = (await pipeline.api('GET', `/v2/deployments/${id}/revisions/${revisionId}`)).body;
  const messages = await logMessages(pipeline, id, revisionId);
  expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
  expect(messages.some((message) => message.includes(installCommand))).toBe(true);
  expect(messages.some((message) => /env file \.env not found in the repository; continuing without it/.test(message))).toBe(
    true,
  );

  const deployment = (await pipeline.api('GET', `/v2/deployments/${id}`)).body;
  const response = await fetch(`${deployment.url}/runs/wait`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
    body: JSON.stringify({ assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hello' }] } }),
  });
  expect(response.status).toBe(200);
  const state = (await response.json()) as { messages: Array<{ content: string }> };
  expect(state.messages.map((message) => message.content)).toEqual(['hello', 'Hi there! You said 1 message(s).']);
}

// The Python SDK's environment is made before any stack serves from this process: pip would block its event loop.
beforeAll(() => {
  const reason = ensurePythonClientNow();
  if (reason) throw new Error(`the Python SDK is needed here: ${reason}`);
}, 320_000);

describe('with the process runner', () => {
  let pipeline: PipelineStack;
  beforeAll(async () => {
    pipeline = await startPipelineStack();
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  it.each(STARTS)(
    `a %s starter reaches DEPLOYED with its lock file's install (%s), warns about the missing .env, and answers a run`,
    async (manager, installCommand) => deployStarter(pipeline, manager, installCommand),
    320_000,
  );
  it(
    "LangChain's Python starter reaches DEPLOYED with its environment built, and answers /runs/stream through the Python and JS SDKs",
    async () => deployPythonStarter(pipeline),
    PYTHON_STARTER_MS,
  );
  it('builds with a warning for each documented key it does not act on, and fails BUILD_FAILED naming an unknown key', async () => {
    const repo = createGitRepo(path.join(STARTERS, 'npm'));
    const config = JSON.parse(fs.readFileSync(path.join(repo.dir, 'graphx.json'), 'utf8'));
    const documented = {
      ...config,
      dockerfile_lines: ['RUN true'],
      store: { index: { dims: 3, embed: 'fake:embed' } },
      checkpointer: { ttl: { strategy: 'delete' } },
      http: { cors: { allow_origins: ['*'] } },
      keep_alive: 30,
      image_distro: 'wolfi',
    };
    repo.commit('documented keys', { 'graphx.json': JSON.stringify(documented) });
    const accepted = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(`keys-${crypto.randomBytes(3).toString('hex')}`, repo.url),
    );
    const { id, latest_revision_id: revisionId } = accepted.body;
    await pipeline.waitForRevision(id, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'), 300_000);
    expect((await pipeline.api('GET', `/v2/deployments/${id}/revisions/${revisionId}`)).body.status).toBe('DEPLOYED');
    const messages = await logMessages(pipeline, id, revisionId);
    for (const key of ['dockerfile_lines', 'store', 'checkpointer', 'keep_alive', 'image_distro']) {
      expect(messages.some((message) => message.includes(`graphx.json "${key}" is accepted but not supported here`))).toBe(true);
    }

    repo.commit('a typo', { 'graphx.json': JSON.stringify({ ...config, grahps: {} }) });
    const typo = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(`typo-${crypto.randomBytes(3).toString('hex')}`, repo.url),
    );
    await pipeline.waitForRevision(typo.body.id, typo.body.latest_revision_id, (status) => status.endsWith('_FAILED'), 120_000);
    const failed = (await pipeline.api('GET', `/v2/deployments/${typo.body.id}/revisions/${typo.body.latest_revision_id}`)).body;
    expect(failed.status).toBe('BUILD_FAILED');
    expect(failed.status_message).toMatch(/unknown key\(s\) "grahps"; graphx\.json accepts .*graphs/);
  }, 320_000);
});

(podmanAvailable() ? describe : describe.skip)('with the container runner (images built by podman)', () => {
  let pipeline: PipelineStack;
  beforeAll(async () => {
    const engine = await startTestEngine();
    await ensureTestRuntimeImage(engine.engine);
    pipeline = await startPipelineStack({
      env: { GRAPHX_RUNNER: 'container', GRAPHX_CONTAINER_SOCKET: engine.service.socketPath },
    });
  }, IMAGE_BUILD_HOOK_MS);
  afterAll(async () => {
    await pipeline?.stop();
  });

  it.each(STARTS)(
    `a %s starter reaches DEPLOYED with its lock file's install (%s) run anew in its dependency layer, and answers a run`,
    async (manager, installCommand) => deployStarter(pipeline, manager, installCommand, true),
    320_000,
  );
  it(
    "LangChain's Python starter reaches DEPLOYED with its environment in a layer of its own, and answers /runs/stream through the Python and JS SDKs",
    async () => deployPythonStarter(pipeline),
    PYTHON_STARTER_MS,
  );
});
