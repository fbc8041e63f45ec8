/**
 * `graphx start` after a crash, and with a stuck worker (issue 24, point 12). A SIGKILL of the stack's main process
 * used to leave PostgreSQL, the Temporal dev server and the apps running, and the next start then failed on
 * PostgreSQL's lock file; a restart while a PATCHed revision was DEPLOYING left two app instances. Now the next start
 * ends what its dead predecessor left (its records in `<data>/run`), serves, finishes the revision with one instance;
 * and since the worker is a process of its own, a stopped (SIGSTOP) worker leaves the API and the gateway answering.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '@graphx/kit/os/processes';
import { makeDataDir } from '../support/env';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import {
  apiCall,
  graphxStart,
  instancesOf,
  recordedPid,
  stackPorts,
  until,
  type StartedStack as Started,
} from '../support/graphxStart';
import { streamEchoRun } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');

const started: Started[] = [];
afterAll(() => {
  for (const stack of started) if (stack.child.exitCode === null) stack.child.kill('SIGKILL');
});

describe('graphx start after a crash of its main process, and with a stopped worker', () => {
  const dataDir = makeDataDir('takeover');
  let ports: Record<string, string>;
  let stack: Started;
  let repo: GitRepo;
  let deploymentId: string;

  const api = (method: string, urlPath: string, body?: unknown) => apiCall(stack, method, urlPath, body);
  const revisionStatus = async (revisionId: string) =>
    (await api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body.status as string;

  beforeAll(async () => {
    ports = await stackPorts();
    stack = await graphxStart(dataDir, ports);
    started.push(stack);
    repo = createGitRepo(FIXTURE);
    const created = await api('POST', '/v2/deployments', {
      name: 'takeover-check',
      source: 'codehost',
      source_config: { repo_url: repo.url },
      source_revision_config: {},
      secrets: [],
    });
    deploymentId = created.body.id;
    expect(await until(async () => (await revisionStatus(created.body.latest_revision_id)) === 'DEPLOYED', 180_000)).toBe(true);
  }, 400_000);

  it('a SIGKILL while a PATCHed revision deploys: the next start ends the leftovers, serves, and finishes it with one instance', async () => {
    repo.commit('v2', {
      'src/graph.js': fs.readFileSync(path.join(FIXTURE, 'src', 'graph.js'), 'utf8').replace('`echo: ${', '`v2: ${'),
    });
    const patched = await api('PATCH', `/v2/deployments/${deploymentId}`, { source_revision_config: { repo_ref: 'main' } });
    const revisionId = patched.body.latest_revision_id as string;
    expect(await until(async () => (await revisionStatus(revisionId)) === 'DEPLOYING', 180_000)).toBe(true);
    const leftovers = [recordedPid(dataDir, 'postgres'), recordedPid(dataDir, 'temporal'), recordedPid(dataDir, 'worker')];
    stack.child.kill('SIGKILL');
    await new Promise((resolve) => stack.child.once('exit', resolve));

    stack = await graphxStart(dataDir, ports);
    started.push(stack);
    expect(stack.output()).toContain('ended what it left running');
    expect(leftovers.filter((pid) => isProcessAlive(pid))).toEqual([]);
    expect(await until(async () => (await revisionStatus(revisionId)) === 'DEPLOYED', 180_000)).toBe(true);
    const deployment = (await api('GET', `/v2/deployments/${deploymentId}`)).body;
    expect(await streamEchoRun(deployment.url, stack.key, 'after')).toContainEqual({
      event: 'updates',
      data: { respond: { echo: 'v2: after' } },
    });
    // The old revision's instance drains away; then one instance runs, and stays the only one.
    expect(await until(() => instancesOf(deploymentId).length === 1, 60_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(instancesOf(deploymentId)).toHaveLength(1);
  }, 600_000);

  it('a stopped (SIGSTOP) worker leaves the API and the gateway answering', async () => {
    const worker = recordedPid(dataDir, 'worker');
    const deployment = (await api('GET', `/v2/deployments/${deploymentId}`)).body;
    process.kill(worker, 'SIGSTOP');
    try {
      const startedAt = Date.now();
      expect((await api('GET', `/v2/deployments/${deploymentId}`)).status).toBe(200);
      expect((await api('GET', '/v2/deployments')).status).toBe(200);
      expect(await streamEchoRun(deployment.url, stack.key, 'while stopped')).toContainEqual({
        event: 'updates',
        data: { respond: { echo: 'v2: while stopped' } },
      });
      expect(Date.now() - startedAt).toBeLessThan(5000);
    } finally {
      process.kill(worker, 'SIGCONT');
    }
  });

  it('SIGTERM stops it all: no process of the data dir is left', async () => {
    const exited = new Promise((resolve) => stack.child.once('exit', resolve));
    stack.child.kill('SIGTERM');
    await exited;
    expect(await until(() => instancesOf(deploymentId).length === 0, 30_000)).toBe(true);
    expect(
      (['postgres', 'temporal', 'worker'] as const)
        .map((role) => recordedPid(dataDir, role))
        .filter((pid) => isProcessAlive(pid)),
    ).toEqual([]);
  }, 60_000);
});
