import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createActivities } from '../../../activities';
import { createApp } from '../../../src/api/app';
import { dropDeploymentDatabase } from '../../../src/pipeline/deploymentDatabase';
import { isProcessAlive } from '@graphx/kit/os/processes';
import { InstanceStore } from '../../../src/db/repositories/instances';
import { testTemporalClient } from '../../support/env';
import { createGitRepo } from '../../support/gitRepos';
import { createDeployment, createTestDeps, runActivity, type TestDeps } from '../activities/pipelineFixtures';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'pipeline-echo');

// Every step for real: git clone, `npm ci` from the registry (cold cache: slow), PostgreSQL, the runtime, the API.
describe('clone, build, database and rollout of the pipeline-echo LangGraph.js app with the real runtime', () => {
  let deps: TestDeps;
  let closeGateway: () => Promise<void>;
  let api: http.Server;
  let temporal: Awaited<ReturnType<typeof testTemporalClient>>;

  beforeAll(async () => {
    deps = createTestDeps(
      {},
      { instanceCommand: undefined, timings: { healthTimeoutMs: 90_000, routeSettleMs: 700, drainTimeoutMs: 10_000 } },
    );
    closeGateway = await deps.target.startGateway();
    temporal = await testTemporalClient();
    api = http.createServer(createApp({ config: deps.config, db: deps.db, secretBox: deps.secretBox, temporal }).callback());
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    deps.target.setControlPlaneUrl(`http://127.0.0.1:${(api.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await closeGateway();
    await deps.close();
    api.closeAllConnections();
    await new Promise((resolve) => api.close(resolve));
    await temporal.connection.close();
  });

  it('the deployed app streams the graph updates through the gateway URL', async () => {
    const repo = createGitRepo(FIXTURE);
    const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl: repo.url, repoRef: 'main' });
    const ref = { revisionId: deployment.revisionId, deploymentId: deployment.deploymentId };
    const activities = createActivities(deps);
    try {
      const { repoCommitSha } = await runActivity(activities.cloneRepository, ref);
      expect(repoCommitSha).toBe(repo.head());
      await runActivity(activities.buildApplication, ref);
      await runActivity(activities.provisionDatabase, { deploymentId: deployment.deploymentId });
      const { url } = await runActivity(activities.rolloutRevision, ref);

      const response = await fetch(`${url}/runs/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': deployment.apiKey },
        body: JSON.stringify({ assistant_id: 'agent', input: { input: 'hi' }, stream_mode: 'updates' }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const body = await response.text();
      expect(body).toMatch(/^event: metadata\n/);
      expect(body).toContain('event: updates\ndata: {"respond":{"echo":"echo: hi"}}');

      const [instance] = await new InstanceStore(deps.db).live(deployment.deploymentId);
      await deps.db('deployments').where({ id: deployment.deploymentId }).update({ status: 'AWAITING_DELETE' });
      await runActivity(activities.teardownDeployment, { deploymentId: deployment.deploymentId });
      expect(isProcessAlive(instance?.pid)).toBe(false);
    } finally {
      await dropDeploymentDatabase(deps.db, deployment.deploymentId);
    }
  }, 240_000);
});
