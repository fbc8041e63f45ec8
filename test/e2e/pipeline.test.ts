/**
 * Issue 3's acceptance through the public API only: a real git repository holding a LangGraph.js app, the real
 * pipeline (Temporal dev server, git, npm, PostgreSQL, supervised runtime processes behind the gateway).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { codehostDeployment, readSse, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const DEPLOYING_STATES = ['AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED'];

/** Checks that `seen` walks forward through `order` (polling may miss short states, never reorder them). */
function expectInOrder(seen: string[], order: string[]): void {
  const positions = seen.map((status) => order.indexOf(status));
  expect(positions.every((position) => position >= 0)).toBe(true);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);
}

describe('deployments from a git repository to a running app', () => {
  let pipeline: PipelineStack;
  let repo: GitRepo;

  beforeAll(async () => {
    pipeline = await startPipelineStack();
    repo = createGitRepo(FIXTURE);
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  async function streamRun(url: string, input: string) {
    const response = await fetch(`${url}/runs/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
      body: JSON.stringify({ assistant_id: 'agent', input: { input }, stream_mode: 'updates' }),
    });
    expect(response.status).toBe(200);
    return readSse(response);
  }

  it('takes a codehost deployment through the pipeline to DEPLOYED and streams the graph’s updates at its URL', async () => {
    const name = `e2e-${crypto.randomBytes(3).toString('hex')}`;
    const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('AWAITING_DATABASE');
    const seen = await pipeline.waitForRevision(created.body.id, created.body.latest_revision_id, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'));
    const settled = (await pipeline.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`)).body;
    expect({ status: settled.status, message: settled.status_message }).toEqual({ status: 'DEPLOYED', message: null });
    expectInOrder(seen.filter((status) => status !== 'CREATING' && status !== 'QUEUED'), DEPLOYING_STATES);

    const deployment = (await pipeline.api('GET', `/v2/deployments/${created.body.id}`)).body;
    expect(deployment).toMatchObject({ status: 'READY', active_revision_id: created.body.latest_revision_id });
    expect(deployment.url).toBe(`${pipeline.stack.gatewayUrl}/${name}`);
    const revision = (await pipeline.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`)).body;
    expect(revision.source_revision_config.repo_commit_sha).toBe(repo.head());

    const events = await streamRun(deployment.url, 'hello');
    expect(events[0]?.event).toBe('metadata');
    expect(events).toContainEqual({ event: 'updates', data: { respond: { echo: 'echo: hello' } } });

    const logs = (await pipeline.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}/logs`)).body;
    expect(logs.logs.length).toBeGreaterThan(0);
  });
});
