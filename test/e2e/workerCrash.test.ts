/**
 * A worker killed with SIGKILL during BUILDING, and another during DEPLOYING: with a fresh worker process each time,
 * the revision still reaches DEPLOYED, with exactly one app instance and one database for the deployment.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, readSse, startPipelineStack, type PipelineStack } from '../support/pipelineStack';
import { killWorkerProcess, startWorkerProcess } from '../support/workerProcess';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');

describe('pipeline survives worker crashes', () => {
  let pipeline: PipelineStack;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    pipeline = await startPipelineStack({ worker: false });
  });
  // A test that fails half-way must not leave its worker behind: every stack of the run shares one Temporal namespace
  // and task queues, so a leftover worker would take the next test's activities with its own data dir and secret key
  // (seen in CI: it provisioned the next deployment's database role with another password).
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => kill(worker)));
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  /** `graphx worker` as its own process, sharing the stack's database, Temporal, data dir and secret key. */
  function startWorker(): ChildProcess {
    const worker = startWorkerProcess(pipeline, { GRAPHX_RUNNER: 'process' });
    workers.push(worker);
    return worker;
  }

  const kill = killWorkerProcess;

  it('reaches DEPLOYED after SIGKILL in BUILDING and in DEPLOYING, with one app instance and one database', async () => {
    // An app that takes 4 s to load, so DEPLOYING lasts long enough to kill a worker in it.
    const repo = createGitRepo(FIXTURE);
    const graph = fs.readFileSync(path.join(repo.dir, 'src', 'graph.js'), 'utf8');
    repo.commit('slow start', { 'src/graph.js': `await new Promise((resolve) => setTimeout(resolve, 4000));\n${graph}` });

    let worker = startWorker();
    const name = `crash-${crypto.randomBytes(3).toString('hex')}`;
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(name, repo.url, { sourceConfig: { build_command: 'sleep 5' } }),
    );
    expect(created.status).toBe(201);
    const deploymentId: string = created.body.id;
    const revisionId: string = created.body.latest_revision_id;

    await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'BUILDING');
    await kill(worker);
    worker = startWorker();

    await pipeline.waitForRevision(
      deploymentId,
      revisionId,
      (status) => status === 'DEPLOYING' || status === 'DEPLOYED' || status.endsWith('FAILED'),
    );
    const atKill = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body.status;
    expect(atKill).toBe('DEPLOYING');
    await kill(worker);
    worker = startWorker();

    await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('FAILED'));
    const revision = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
    const deployment = (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
    expect(deployment.active_revision_id).toBe(revisionId);

    // Exactly one instance runs (what the database says and what the process table says agree).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const live = await pipeline.stack
      .db('local_instances')
      .where({ deployment_id: deploymentId })
      .whereNot({ status: 'stopped' });
    expect(live).toHaveLength(1);
    expect(runtimeProcessesOf(deploymentId)).toHaveLength(1);
    const events = readSse(
      await fetch(`${deployment.url}/runs/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
        body: JSON.stringify({ assistant_id: 'agent', input: { input: 'after crashes' }, stream_mode: 'updates' }),
      }),
    );
    expect(await events).toContainEqual({ event: 'updates', data: { respond: { echo: 'echo: after crashes' } } });

    // One database for the deployment.
    const admin = new PgClient({ connectionString: process.env.GRAPHX_TEST_PG_ADMIN_URL });
    await admin.connect();
    try {
      const { database_name: databaseName } = await pipeline.stack
        .db('deployments')
        .where({ id: deploymentId })
        .first('database_name');
      const compact = deploymentId.replace(/-/g, '');
      const databases = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`%${compact}%`]);
      expect(databases.rows.map((row) => row.datname)).toEqual([databaseName]);
    } finally {
      await admin.end();
    }

    // Clean up through the product: delete stops the instance (started by a worker process, not by this one).
    expect((await pipeline.api('DELETE', `/v2/deployments/${deploymentId}`)).status).toBe(204);
    const deadline = Date.now() + 60_000;
    while ((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status !== 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(runtimeProcessesOf(deploymentId)).toEqual([]);
    await kill(worker);
  }, 420_000);

  it('keeps an app serving while its worker is replaced, and a new worker restarts an instance that died meanwhile', async () => {
    const repo = createGitRepo(FIXTURE);
    let worker = startWorker();
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(`handover-${crypto.randomBytes(3).toString('hex')}`, repo.url),
    );
    const deploymentId: string = created.body.id;
    await pipeline.waitForRevision(
      deploymentId,
      created.body.latest_revision_id,
      (status) => status === 'DEPLOYED' || status.endsWith('FAILED'),
    );
    const deployment = (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
    const ask = async (input: string) => {
      const response = await fetch(`${deployment.url}/runs/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
        body: JSON.stringify({ assistant_id: 'agent', input: { input }, stream_mode: 'updates' }),
      });
      return response.status === 200
        ? (await readSse(response)).find((event) => event.event === 'updates')?.data
        : response.status;
    };
    expect(await ask('one')).toEqual({ respond: { echo: 'echo: one' } });

    // A graceful stop of the worker leaves the app running.
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
    expect(await ask('two')).toEqual({ respond: { echo: 'echo: two' } });

    // With no worker supervising, the app process dies; the next worker brings it back.
    const [pid] = runtimeProcessesOf(deploymentId);
    process.kill(pid as number, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(runtimeProcessesOf(deploymentId)).toEqual([]);
    worker = startWorker();
    const deadline = Date.now() + 90_000;
    let answer: unknown;
    do {
      await new Promise((resolve) => setTimeout(resolve, 500));
      answer = await ask('three').catch((error: Error) => error.message);
    } while (JSON.stringify(answer) !== JSON.stringify({ respond: { echo: 'echo: three' } }) && Date.now() < deadline);
    expect(answer).toEqual({ respond: { echo: 'echo: three' } });
    expect(runtimeProcessesOf(deploymentId)).toHaveLength(1);

    expect((await pipeline.api('DELETE', `/v2/deployments/${deploymentId}`)).status).toBe(204);
    const gone = Date.now() + 60_000;
    while ((await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).status !== 404 && Date.now() < gone) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(runtimeProcessesOf(deploymentId)).toEqual([]);
    await kill(worker);
  }, 300_000);

  it('deploys with builds on a build-only worker process and rollouts in the API process, as docker-compose runs them', async () => {
    const split = await startPipelineStack({ env: { GRAPHX_WORKER_QUEUES: 'control' } });
    const builder = startWorkerProcess(split, { GRAPHX_RUNNER: 'process', GRAPHX_WORKER_QUEUES: 'build' });
    workers.push(builder);
    try {
      const repo = createGitRepo(FIXTURE);
      const created = await split.api(
        'POST',
        '/v2/deployments',
        codehostDeployment(`split-${crypto.randomBytes(3).toString('hex')}`, repo.url),
      );
      await split.waitForRevision(
        created.body.id,
        created.body.latest_revision_id,
        (status) => status === 'DEPLOYED' || status.endsWith('FAILED'),
      );
      const revision = (await split.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`))
        .body;
      expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
      // The build ran in the other process: its log lines were written while this process polls no build queue.
      const logs = (
        await split.api('GET', `/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}/logs?limit=1000`)
      ).body;
      expect(logs.logs.some((line: { message: string }) => /npm ci|Dependencies unchanged/.test(line.message))).toBe(true);
      expect((await split.api('DELETE', `/v2/deployments/${created.body.id}`)).status).toBe(204);
      const gone = Date.now() + 60_000;
      while ((await split.api('GET', `/v2/deployments/${created.body.id}`)).status !== 404 && Date.now() < gone) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await kill(builder);
      await split.stop();
    }
  }, 300_000);
});

/** Runtime processes of a deployment, by the GRAPHX_DEPLOYMENT_ID in their environment. */
function runtimeProcessesOf(deploymentId: string): number[] {
  const pids = execFileSync('sh', ['-c', "pgrep -f 'graphx.js runtime' || true"], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map(Number);
  return pids.filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`GRAPHX_DEPLOYMENT_ID=${deploymentId}`);
    } catch {
      return false;
    }
  });
}
