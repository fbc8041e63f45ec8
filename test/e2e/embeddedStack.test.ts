/**
 * `graphx start` as a user runs it: a real child process bringing up embedded PostgreSQL, the Temporal dev server
 * (with its Web UI), the API, the worker and the gateway; SIGINT stops all of it.
 */
import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection, WorkflowClient } from '@temporalio/client';
import { findFreePort } from '@graphx/kit/net/ports';
import { makeDataDir, testEnv } from '../support/env';
import { createGitRepo } from '../support/gitRepos';
import { readSse } from '../support/pipelineStack';
import { processesMentioning } from '../support/workerProcess';

const root = path.resolve(__dirname, '..', '..');

interface Started {
  child: ChildProcess;
  output: () => string;
  ports: Record<string, number>;
}

async function startStack(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Started> {
  const ports = {
    PORT: await findFreePort(),
    GRAPHX_GATEWAY_PORT: await findFreePort(),
    GRAPHX_TEMPORAL_PORT: await findFreePort(),
    GRAPHX_TEMPORAL_UI_PORT: await findFreePort(),
  };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Host processes until the e2e pipeline runs in container mode (issue 10, build side).
    GRAPHX_RUNNER: 'process',
    GRAPHX_DATA_DIR: dataDir,
    GRAPHX_LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  for (const [name, port] of Object.entries(ports)) env[name] = String(port);
  const child = spawn(process.execPath, [path.join(root, 'bin', 'graphx.js'), 'start'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stack did not start in 120 s:\n${output}`)), 120_000);
    const check = () => {
      if (output.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`graphx start exited with ${code}:\n${output}`));
    });
  });
  return { child, output: () => output, ports };
}

async function stopStack(started: Started): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => started.child.once('exit', (code) => resolve(code)));
  started.child.kill('SIGINT');
  return exited;
}

describe('graphx start (embedded stack)', () => {
  it('prints every address, serves the API and the Temporal UI, keeps its key and history across restarts, and leaves no process after SIGINT', async () => {
    const dataDir = makeDataDir('embedded');
    const first = await startStack(dataDir);
    const api = `http://127.0.0.1:${first.ports.PORT}`;
    try {
      expect(first.output()).toContain(`API:           ${api}`);
      expect(first.output()).toContain(`Gateway:       http://127.0.0.1:${first.ports.GRAPHX_GATEWAY_PORT}`);
      expect(first.output()).toContain(`Temporal UI:   http://127.0.0.1:${first.ports.GRAPHX_TEMPORAL_UI_PORT}`);
      expect(first.output()).toContain(`API key file:  ${path.join(dataDir, 'api-key')}`);
      const key = fs.readFileSync(path.join(dataDir, 'api-key'), 'utf8').trim();
      expect(first.output()).toContain(key);
      expect(fs.statSync(path.join(dataDir, 'api-key')).mode & 0o777).toBe(0o600);

      expect((await fetch(`${api}/ok`)).status).toBe(200);
      const unauthorized = await fetch(`${api}/v2/deployments`);
      expect(unauthorized.status).toBe(401);
      expect(await unauthorized.json()).toEqual({ detail: 'Missing X-Api-Key header.' });
      expect((await fetch(`${api}/v2/deployments`, { headers: { 'X-Api-Key': key } })).status).toBe(200);
      const ui = await fetch(`http://127.0.0.1:${first.ports.GRAPHX_TEMPORAL_UI_PORT}/`);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toMatch(/<html/i);

      // A real deployment on the embedded stack (its database in embedded PostgreSQL), to find again after a restart.
      const repo = createGitRepo(path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo'));
      const created = await fetch(`${api}/v2/deployments`, {
        method: 'POST',
        headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: 'restart-check',
          source: 'codehost',
          source_config: { repo_url: repo.url },
          source_revision_config: {},
          secrets: [],
        }),
      });
      expect(created.status).toBe(201);
      const { id: deploymentId, latest_revision_id: revisionId } = (await created.json()) as {
        id: string;
        latest_revision_id: string;
      };
      await waitForWorkflow(`127.0.0.1:${first.ports.GRAPHX_TEMPORAL_PORT}`, `deployment/${deploymentId}`);
      expect(await waitForDeployed(api, key, deploymentId, revisionId)).toBe('DEPLOYED');
      const appUrl = `http://127.0.0.1:${first.ports.GRAPHX_GATEWAY_PORT}/restart-check`;
      expect(await echoThrough(appUrl, key, 'before')).toBe('echo: before');

      expect(await stopStack(first)).toBe(0);
      expect(processesMentioning(dataDir)).toEqual([]);

      const second = await startStack(dataDir);
      try {
        expect(second.output()).not.toContain('New API key');
        const again = await fetch(`http://127.0.0.1:${second.ports.PORT}/v2/deployments/${deploymentId}`, {
          headers: { 'X-Api-Key': key },
        });
        expect(again.status).toBe(200);
        await waitForWorkflow(`127.0.0.1:${second.ports.GRAPHX_TEMPORAL_PORT}`, `deployment/${deploymentId}`);
        // The app serves again after the restart, at the new gateway.
        expect(await echoThrough(`http://127.0.0.1:${second.ports.GRAPHX_GATEWAY_PORT}/restart-check`, key, 'after')).toBe(
          'echo: after',
        );
      } finally {
        expect(await stopStack(second)).toBe(0);
      }
      expect(processesMentioning(dataDir)).toEqual([]);
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
    }
  }, 300_000);

  it('starts neither PostgreSQL nor Temporal when DATABASE_URL and TEMPORAL_ADDRESS are set', async () => {
    const dataDir = makeDataDir('external');
    const started = await startStack(dataDir, {
      DATABASE_URL: testEnv.databaseUrl(),
      TEMPORAL_ADDRESS: testEnv.temporalAddress(),
      GRAPHX_TASK_QUEUE_PREFIX: `test-${crypto.randomBytes(4).toString('hex')}`,
      GRAPHX_BOOTSTRAP_API_KEY: 'gx_external-bootstrap-key-for-tests',
    });
    try {
      expect(started.output()).toContain(`Temporal:      ${testEnv.temporalAddress()} (external)`);
      expect(started.output()).toContain('PostgreSQL:    external (DATABASE_URL)');
      expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
      expect(fs.existsSync(path.join(dataDir, 'temporal.sqlite'))).toBe(false);
      // Only the stack's own worker process (it runs apart from the API) names the data dir.
      expect(processesMentioning(dataDir).map((line) => line.replace(/^\d+ /, '').split(' --')[0])).toEqual([
        `${process.execPath} ${path.join(root, 'bin', 'graphx.js')} worker`,
      ]);
      const response = await fetch(`http://127.0.0.1:${started.ports.PORT}/v2/deployments`, {
        headers: { 'X-Api-Key': 'gx_external-bootstrap-key-for-tests' },
      });
      expect(response.status).toBe(200);
    } finally {
      expect(await stopStack(started)).toBe(0);
    }
  }, 120_000);
});

async function waitForWorkflow(address: string, workflowId: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const client = new WorkflowClient({ connection });
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await client.getHandle(workflowId).describe();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    await connection.close();
  }
}

async function waitForDeployed(api: string, key: string, deploymentId: string, revisionId: string): Promise<string> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const response = await fetch(`${api}/v2/deployments/${deploymentId}/revisions/${revisionId}`, {
      headers: { 'X-Api-Key': key },
    });
    const { status, status_message: message } = (await response.json()) as { status: string; status_message: string | null };
    if (status === 'DEPLOYED') return status;
    if (status.endsWith('_FAILED') || Date.now() > deadline) return `${status}: ${message}`;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function echoThrough(appUrl: string, key: string, input: string): Promise<string | undefined> {
  const response = await fetch(`${appUrl}/runs/stream`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Api-Key': key },
    body: JSON.stringify({ assistant_id: 'agent', input: { input }, stream_mode: 'updates' }),
  });
  const events = await readSse(response);
  return (events.find((event) => event.event === 'updates')?.data as { respond?: { echo: string } } | undefined)?.respond?.echo;
}
