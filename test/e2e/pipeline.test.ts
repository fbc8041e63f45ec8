/**
 * Issue 3's acceptance through the public API only: a real git repository holding a LangGraph.js app, the real
 * pipeline (Temporal dev server, git, npm, PostgreSQL, supervised runtime processes behind the gateway).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { Client as PgClient } from 'pg';
import { retrySignal, revisionWorkflowId } from '../../workflows/messages';
import { createTenant, testEnv, testTemporalClient } from '../support/env';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { codehostDeployment, readSse, startPipelineStack, streamEchoRun, type PipelineStack } from '../support/pipelineStack';
import { processesMentioning } from '../support/workerProcess';

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
    // Branch v2 answers differently, so a test can tell which revision serves.
    repo.branch('v2', true);
    const graph = fs.readFileSync(path.join(repo.dir, 'src', 'graph.js'), 'utf8');
    repo.commit('v2 answers with v2:', { 'src/graph.js': graph.replace('`echo: ${', '`v2: ${') });
    repo.checkout('main');
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  const streamRun = (url: string, input: string) => streamEchoRun(url, pipeline.apiKey, input);

  it('takes a codehost deployment through the pipeline to DEPLOYED and streams the graph’s updates at its URL', async () => {
    const name = `e2e-${crypto.randomBytes(3).toString('hex')}`;
    const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('AWAITING_DATABASE');
    const seen = await pipeline.waitForRevision(
      created.body.id,
      created.body.latest_revision_id,
      (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'),
    );
    const settled = (await pipeline.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`))
      .body;
    expect({ status: settled.status, message: settled.status_message }).toEqual({ status: 'DEPLOYED', message: null });
    expectInOrder(
      seen.filter((status) => status !== 'CREATING' && status !== 'QUEUED'),
      DEPLOYING_STATES,
    );

    const deployment = (await pipeline.api('GET', `/v2/deployments/${created.body.id}`)).body;
    expect(deployment).toMatchObject({ status: 'READY', active_revision_id: created.body.latest_revision_id });
    expect(deployment.url).toBe(`${pipeline.stack.gatewayUrl}/${name}`);
    const revision = (
      await pipeline.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`)
    ).body;
    expect(revision.source_revision_config.repo_commit_sha).toBe(repo.head());

    const events = await streamRun(deployment.url, 'hello');
    expect(events[0]?.event).toBe('metadata');
    expect(events).toContainEqual({ event: 'updates', data: { respond: { echo: 'echo: hello' } } });

    const logs = (
      await pipeline.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}/logs`)
    ).body;
    expect(logs.logs.length).toBeGreaterThan(0);
  });

  const revisionOf = async (deploymentId: string, revisionId: string) =>
    (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
  const deploymentOf = async (deploymentId: string) => (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
  const settled = (status: string) => ['DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'BUILD_FAILED', 'DEPLOY_FAILED'].includes(status);

  async function deployAndWait(body: Record<string, unknown>) {
    const created = await pipeline.api('POST', '/v2/deployments', body);
    expect(created.status).toBe(201);
    await pipeline.waitForRevision(created.body.id, created.body.latest_revision_id, settled);
    const revision = await revisionOf(created.body.id, created.body.latest_revision_id);
    expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
    return deploymentOf(created.body.id);
  }

  const newName = (prefix: string) => `${prefix}-${crypto.randomBytes(3).toString('hex')}`;

  it('switches to a new repo_ref with no failed request, moving active_revision_id only once the new revision is DEPLOYED', async () => {
    const deployment = await deployAndWait(codehostDeployment(newName('switch'), repo.url));
    const firstRevision = deployment.active_revision_id;
    const patched = await pipeline.api('PATCH', `/v2/deployments/${deployment.id}`, {
      source_revision_config: { repo_ref: 'v2' },
    });
    expect(patched.status).toBe(200);
    const secondRevision = patched.body.latest_revision_id;
    expect(secondRevision).not.toBe(firstRevision);

    const failures: string[] = [];
    const answers = new Set<string>();
    let activeBeforeDeployed: string[] = [];
    let done = false;
    const client = (async () => {
      // A bounded loop of runs on loopback while the switch happens.
      for (let i = 0; i < 2000 && !done; i += 1) {
        try {
          const events = await streamRun(deployment.url, `n${i}`);
          const update = events.find((event) => event.event === 'updates')?.data as { respond?: { echo: string } } | undefined;
          if (!update?.respond) failures.push(`run ${i}: ${JSON.stringify(events)}`);
          else answers.add(update.respond.echo.split(':')[0] as string);
        } catch (error) {
          failures.push(`run ${i}: ${(error as Error).message}`);
        }
      }
    })();
    const watcher = (async () => {
      while (!done) {
        const [current, revision] = await Promise.all([deploymentOf(deployment.id), revisionOf(deployment.id, secondRevision)]);
        if (current.active_revision_id === secondRevision && revision.status !== 'DEPLOYED')
          activeBeforeDeployed.push(revision.status);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await pipeline.waitForRevision(deployment.id, secondRevision, settled);
    // Keep calling for a moment after the switch, while the old instance drains.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    done = true;
    await Promise.all([client, watcher]);

    expect((await revisionOf(deployment.id, secondRevision)).status).toBe('DEPLOYED');
    expect(failures).toEqual([]);
    expect(activeBeforeDeployed).toEqual([]);
    expect(answers).toEqual(new Set(['echo', 'v2']));
    expect((await deploymentOf(deployment.id)).active_revision_id).toBe(secondRevision);
    // The older revision keeps DEPLOYED; active_revision_id tells which one serves.
    expect((await revisionOf(deployment.id, firstRevision)).status).toBe('DEPLOYED');
    activeBeforeDeployed = [];
  });

  it('skips the two older of three quick PATCHes made while a revision builds, deploying the building one first and then the newest', async () => {
    const deployment = await deployAndWait(codehostDeployment(newName('queue'), repo.url));
    const slow = await pipeline.api('PATCH', `/v2/deployments/${deployment.id}`, {
      source_config: { build_command: 'sleep 4' },
      source_revision_config: { repo_ref: 'v2' },
    });
    const building = slow.body.latest_revision_id;
    await pipeline.waitForRevision(deployment.id, building, (status) => status === 'BUILDING' || settled(status));
    const quick: string[] = [];
    for (const ref of ['main', 'v2', 'main']) {
      const response = await pipeline.api('PATCH', `/v2/deployments/${deployment.id}`, {
        source_config: { build_command: 'true' },
        source_revision_config: { repo_ref: ref },
      });
      expect(response.status).toBe(200);
      quick.push(response.body.latest_revision_id);
    }
    const [second, third, newest] = quick as [string, string, string];
    await pipeline.waitForRevision(deployment.id, newest, settled);
    expect((await revisionOf(deployment.id, building)).status).toBe('DEPLOYED');
    expect((await revisionOf(deployment.id, second)).status).toBe('SKIPPED');
    expect((await revisionOf(deployment.id, third)).status).toBe('SKIPPED');
    expect((await revisionOf(deployment.id, newest)).status).toBe('DEPLOYED');
    const list = (await pipeline.api('GET', `/v2/deployments/${deployment.id}/revisions?status=SKIPPED`)).body;
    expect(list.resources.map((revision: { id: string }) => revision.id).sort()).toEqual([second, third].sort());
    expect((await deploymentOf(deployment.id)).active_revision_id).toBe(newest);
    const events = await streamRun((await deploymentOf(deployment.id)).url, 'last');
    expect(events).toContainEqual({ event: 'updates', data: { respond: { echo: 'echo: last' } } });
  });

  async function failingBuildDeployment() {
    const flag = path.join(testEnv.runDir(), `flag-${crypto.randomBytes(4).toString('hex')}`);
    const body = codehostDeployment(newName('retry'), repo.url, {
      sourceConfig: {
        build_command: `echo building; test -f ${flag} || { echo "flag file ${path.basename(flag)} is missing"; exit 3; }`,
      },
    });
    const created = await pipeline.api('POST', '/v2/deployments', body);
    expect(created.status).toBe(201);
    await pipeline.waitForRevision(created.body.id, created.body.latest_revision_id, settled);
    const failed = await revisionOf(created.body.id, created.body.latest_revision_id);
    expect(failed.status).toBe('BUILD_FAILED');
    expect(failed.status_message).toContain(`flag file ${path.basename(flag)} is missing`);
    expect(failed.status_message).toContain('exited with code 3');
    fs.writeFileSync(flag, 'ok');
    return { deploymentId: created.body.id as string, revisionId: created.body.latest_revision_id as string };
  }

  it('ends a failing build_command BUILD_FAILED with its last output line, and POST …/retry brings it to DEPLOYED without a new revision', async () => {
    const { deploymentId, revisionId } = await failingBuildDeployment();
    const retried = await pipeline.api('POST', `/v2/deployments/${deploymentId}/revisions/${revisionId}/retry`);
    expect(retried.status).toBe(202);
    await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'DEPLOYED');
    const deployment = await deploymentOf(deploymentId);
    expect(deployment.latest_revision_id).toBe(revisionId);
    expect(deployment.active_revision_id).toBe(revisionId);
    expect((await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions`)).body.resources).toHaveLength(1);
  });

  it('resumes a BUILD_FAILED revision with the retry signal sent by a Temporal client, as an operator would', async () => {
    const { deploymentId, revisionId } = await failingBuildDeployment();
    const temporal = await testTemporalClient();
    try {
      await temporal.workflow.getHandle(revisionWorkflowId(revisionId)).signal(retrySignal);
    } finally {
      await temporal.connection.close();
    }
    await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'DEPLOYED');
    expect((await deploymentOf(deploymentId)).active_revision_id).toBe(revisionId);
  });

  it('interrupts a revision during BUILDING: it ends INTERRUPTED and no build process is left', async () => {
    const marker = `graphx-build-marker-${crypto.randomBytes(4).toString('hex')}`;
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(newName('interrupt'), repo.url, {
        sourceConfig: { build_command: `sh -c 'sleep 120; echo ${marker}' ${marker}` },
      }),
    );
    const revisionId = created.body.latest_revision_id;
    await pipeline.waitForRevision(created.body.id, revisionId, (status) => status === 'BUILDING');
    const deadline = Date.now() + 60_000;
    while (processesMentioning(marker).length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processesMentioning(marker).length).toBeGreaterThan(0);
    const interrupted = await pipeline.api('POST', `/v2/deployments/${created.body.id}/revisions/${revisionId}/interrupt`);
    expect(interrupted.status).toBe(202);
    await pipeline.waitForRevision(created.body.id, revisionId, (status) => status === 'INTERRUPTED', 30_000);
    expect(processesMentioning(marker)).toEqual([]);
    const again = await pipeline.api('POST', `/v2/deployments/${created.body.id}/revisions/${revisionId}/interrupt`);
    expect(again.status).toBe(409);
  });

  it('lets an operator find a stuck build in Temporal by deployment name, with its phase and last log lines in the heartbeat', async () => {
    const name = newName('stuck');
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(name, repo.url, {
        sourceConfig: { build_command: 'echo compiling step one; echo compiling step two; sleep 60' },
      }),
    );
    const revisionId: string = created.body.latest_revision_id;
    await pipeline.waitForRevision(created.body.id, revisionId, (status) => status === 'BUILDING');
    const temporal = await testTemporalClient();
    try {
      const found: string[] = [];
      for await (const execution of temporal.workflow.list({
        query: `GraphxDeploymentName = '${name}' AND ExecutionStatus = 'Running'`,
      })) {
        found.push(execution.workflowId);
      }
      expect(found.sort()).toEqual([`deployment/${created.body.id}`, revisionWorkflowId(revisionId)].sort());

      const handle = temporal.workflow.getHandle(revisionWorkflowId(revisionId));
      let details: { phase?: string; lastLines?: string[] } = {};
      const deadline = Date.now() + 60_000;
      while (!details.lastLines?.includes('compiling step two') && Date.now() < deadline) {
        const description = await handle.describe();
        const payload = description.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
        if (payload) details = defaultPayloadConverter.fromPayload(payload);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      expect(details.phase).toMatch(/build/);
      expect(details.lastLines).toEqual(expect.arrayContaining(['compiling step one', 'compiling step two']));
      const description = await handle.describe();
      expect(await description.staticSummary()).toBe(`build ${name} rev 1 from main`);
      expect(description.searchAttributes.GraphxRevisionStatus).toEqual(['BUILDING']);
      expect(description.searchAttributes.GraphxRevisionId).toEqual([revisionId]);
    } finally {
      await temporal.connection.close();
    }
    expect((await pipeline.api('POST', `/v2/deployments/${created.body.id}/revisions/${revisionId}/interrupt`)).status).toBe(202);
    await pipeline.waitForRevision(created.body.id, revisionId, (status) => status === 'INTERRUPTED', 30_000);
  });

  it('redeploys an older revision as a new revision with the older configuration and commit (not its branch’s new tip), and serves it', async () => {
    // A branch of its own at v2's tip, which this test moves on (branch v2 stays, so a retry starts as the first try).
    const branch = newName('v2-copy');
    repo.git('branch', branch, 'v2');
    const deployment = await deployAndWait(codehostDeployment(newName('rollback'), repo.url, { repoRef: branch }));
    const v2Revision = deployment.active_revision_id;
    // The branch moves on after that revision was built: the rollback must run the commit it ran, not the new tip.
    repo.checkout(branch);
    const v2Graph = fs.readFileSync(path.join(repo.dir, 'src', 'graph.js'), 'utf8');
    const movedGraph = v2Graph.replace('`v2: ${', '`moved: ${');
    expect(movedGraph).not.toBe(v2Graph);
    repo.commit('v2 moves on', { 'src/graph.js': movedGraph });
    repo.checkout('main');
    const patched = await pipeline.api('PATCH', `/v2/deployments/${deployment.id}`, {
      source_revision_config: { repo_ref: 'main' },
    });
    await pipeline.waitForRevision(deployment.id, patched.body.latest_revision_id, settled);
    expect((await streamRun(deployment.url, 'x')).find((event) => event.event === 'updates')?.data).toEqual({
      respond: { echo: 'echo: x' },
    });

    const redeployed = await pipeline.api('POST', `/v2/deployments/${deployment.id}/revisions/${v2Revision}/redeploy`);
    expect(redeployed.status).toBe(200);
    const rollbackRevision = redeployed.body.latest_revision_id;
    expect(rollbackRevision).not.toBe(v2Revision);
    expect(redeployed.body.source_revision_config.repo_ref).toBe(branch);
    await pipeline.waitForRevision(deployment.id, rollbackRevision, settled);
    const rollback = await revisionOf(deployment.id, rollbackRevision);
    expect(rollback.status).toBe('DEPLOYED');
    expect(rollback.source_revision_config.repo_commit_sha).toBe(
      (await revisionOf(deployment.id, v2Revision)).source_revision_config.repo_commit_sha,
    );
    expect((await streamRun(deployment.url, 'y')).find((event) => event.event === 'updates')?.data).toEqual({
      respond: { echo: 'v2: y' },
    });
  });

  it('gives two tenants’ deployments of the same name different gateway URLs, each serving its own app', async () => {
    const name = newName('shared');
    const mine = await deployAndWait(codehostDeployment(name, repo.url));
    const other = await createTenant(pipeline.stack.db, 'other');
    const theirs = await fetch(`${pipeline.stack.apiUrl}/v2/deployments`, {
      method: 'POST',
      headers: { 'X-Api-Key': other.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(codehostDeployment(name, repo.url, { repoRef: 'v2' })),
    });
    expect(theirs.status).toBe(201);
    const created = (await theirs.json()) as { id: string; latest_revision_id: string };
    const deadline = Date.now() + 240_000;
    let deployed: { url: string; active_revision_id: string | null } = { url: '', active_revision_id: null };
    while (deployed.active_revision_id !== created.latest_revision_id && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      deployed = (await (
        await fetch(`${pipeline.stack.apiUrl}/v2/deployments/${created.id}`, { headers: { 'X-Api-Key': other.apiKey } })
      ).json()) as typeof deployed;
    }
    expect(deployed.url).not.toBe(mine.url);
    expect(deployed.url).toMatch(new RegExp(`/${name}-[0-9a-f]{8}$`));
    const answer = async (url: string, key: string) => {
      const response = await fetch(`${url}/runs/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': key },
        body: JSON.stringify({ assistant_id: 'agent', input: { input: 'who' }, stream_mode: 'updates' }),
      });
      return (await readSse(response)).find((event) => event.event === 'updates')?.data;
    };
    expect(await answer(mine.url, pipeline.apiKey)).toEqual({ respond: { echo: 'echo: who' } });
    expect(await answer(deployed.url, other.apiKey)).toEqual({ respond: { echo: 'v2: who' } });
  });

  it('deletes a deployment: 204, AWAITING_DELETE, then 404; its app process is gone and its database dropped', async () => {
    const deployment = await deployAndWait(codehostDeployment(newName('delete'), repo.url));
    const instances = await pipeline.stack
      .db('local_instances')
      .where({ deployment_id: deployment.id })
      .whereNot({ status: 'stopped' });
    expect(instances.length).toBeGreaterThan(0);
    const { database_name: databaseName } = await pipeline.stack
      .db('deployments')
      .where({ id: deployment.id })
      .first('database_name');
    expect(databaseName).toBeTruthy();

    const deleted = await pipeline.api('DELETE', `/v2/deployments/${deployment.id}`);
    expect(deleted.status).toBe(204);
    expect((await deploymentOf(deployment.id)).status).toBe('AWAITING_DELETE');
    const deadline = Date.now() + 60_000;
    while ((await pipeline.api('GET', `/v2/deployments/${deployment.id}`)).status !== 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await pipeline.api('GET', `/v2/deployments/${deployment.id}`)).toEqual({
      status: 404,
      body: { detail: `Deployment ID ${deployment.id} not found.` },
    });
    for (const instance of instances) expect(isAlive(instance.pid)).toBe(false);
    const admin = new PgClient({ connectionString: process.env.GRAPHX_TEST_PG_ADMIN_URL });
    await admin.connect();
    try {
      expect((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName])).rowCount).toBe(0);
    } finally {
      await admin.end();
    }
    const gateway = await fetch(`${deployment.url}/ok`);
    expect([404, 502, 503]).toContain(gateway.status);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
