/**
 * `npm start` as a terminal runs it: in its own process group, the way a shell's job control puts it. Ctrl-C (SIGINT
 * to the whole group) and SIGTERM to npm alone (a process manager, `docker stop`) must both stop everything: no
 * process whose command line, cwd or environment names the data dir is left 30 s later. The stack supervises the
 * PostgreSQL and Temporal it started: a killed one is started again and the log says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findFreePort } from '@graphx/kit/net/ports';
import { makeDataDir } from '../support/env';
import { createGitRepo } from '../support/gitRepos';

const root = path.resolve(__dirname, '..', '..');

interface NpmStart {
  child: ChildProcess;
  output: () => string;
  api: string;
  key: string;
}

async function npmStart(dataDir: string): Promise<NpmStart> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GRAPHX_DATA_DIR: dataDir,
    GRAPHX_RUNNER: 'process',
  };
  for (const name of ['PORT', 'GRAPHX_GATEWAY_PORT', 'GRAPHX_TEMPORAL_PORT', 'GRAPHX_TEMPORAL_UI_PORT'])
    env[name] = String(await findFreePort());
  // detached: npm leads a new process group, as the foreground job of a terminal does.
  const child = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  await until(() => output.includes('Press Ctrl-C to stop.') || child.exitCode !== null, 120_000);
  if (!output.includes('Press Ctrl-C to stop.')) throw new Error(`npm start did not start:\n${output}`);
  const key = fs.readFileSync(path.join(dataDir, 'api-key'), 'utf8').trim();
  // The retry command printed at start-up names this stack's Temporal, so it works as shown.
  expect(output).toContain(
    `Retry a failed revision: .temporal-cli/bin/temporal workflow signal --address 127.0.0.1:${env.GRAPHX_TEMPORAL_PORT} --namespace default --workflow-id revision/<revision-id> --name retry`,
  );
  return { child, output: () => output, api: `http://127.0.0.1:${env.PORT}`, key };
}

/** Live processes whose command line, cwd or environment names `dir`. */
function processesNaming(dir: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))) continue;
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (cmdline.includes(dir) || cwd.startsWith(dir) || environ.includes(dir)) found.push(`${pid} ${cmdline}`);
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

async function deploy(stack: NpmStart, name: string): Promise<{ id: string; revisionId: string }> {
  const repo = createGitRepo(path.join(root, 'test', 'fixtures', 'apps', 'pipeline-echo'));
  const response = await fetch(`${stack.api}/v2/deployments`, {
    method: 'POST',
    headers: { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      name,
      source: 'codehost',
      source_config: { repo_url: repo.url },
      source_revision_config: {},
      secrets: [],
    }),
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { id: string; latest_revision_id: string };
  return { id: body.id, revisionId: body.latest_revision_id };
}

async function revisionStatus(stack: NpmStart, deploymentId: string, revisionId: string): Promise<string> {
  const response = await fetch(`${stack.api}/v2/deployments/${deploymentId}/revisions/${revisionId}`, {
    headers: { 'X-Api-Key': stack.key },
  });
  return ((await response.json()) as { status: string }).status;
}

function pidsOf(dataDir: string, marker: string): number[] {
  return processesNaming(dataDir)
    .filter((line) => line.includes(marker))
    .map((line) => Number(line.split(' ')[0]));
}

let running: NpmStart | null = null;
afterEach(() => {
  if (running?.child.pid && running.child.exitCode === null) process.kill(-running.child.pid, 'SIGKILL');
  running = null;
});

describe('npm start shutdown and supervision', () => {
  it('Ctrl-C (SIGINT to the process group) after a deployment leaves no process of the stack or the app within 30 s', async () => {
    const dataDir = makeDataDir('ctrl-c');
    const stack = (running = await npmStart(dataDir));
    const { id, revisionId } = await deploy(stack, 'ctrl-c-check');
    expect(await until(async () => (await revisionStatus(stack, id, revisionId)) === 'DEPLOYED', 180_000)).toBe(true);
    expect(processesNaming(dataDir).some((line) => line.includes('graphx.js runtime'))).toBe(true);

    const exited = new Promise((resolve) => stack.child.once('exit', resolve));
    process.kill(-stack.child.pid!, 'SIGINT');
    await exited;
    expect(await until(() => processesNaming(dataDir).length === 0, 30_000)).toBe(true);
    expect(stack.output()).toContain('graphx: stopped');
  }, 400_000);

  it('restarts a killed PostgreSQL and Temporal (and logs it), then SIGTERM to npm alone mid-rollout stops every process within 30 s', async () => {
    const dataDir = makeDataDir('sigterm');
    const stack = (running = await npmStart(dataDir));
    const postgres = pidsOf(dataDir, 'bin/postgres -D');
    const temporal = pidsOf(dataDir, 'server start-dev');
    expect(postgres.length).toBeGreaterThan(0);
    expect(temporal.length).toBeGreaterThan(0);
    process.kill(postgres[0]!, 'SIGKILL');
    process.kill(temporal[0]!, 'SIGKILL');
    await until(() => (stack.output().match(/ restarted"/g) ?? []).length >= 2, 60_000);
    expect(stack.output()).toContain('PostgreSQL exited unexpectedly; restarting it');
    expect(stack.output()).toContain('"PostgreSQL restarted"');
    expect(stack.output()).toContain('"the Temporal dev server restarted"');

    await deploy(stack, 'sigterm-check');
    // As soon as the first app instance runs: the rollout is still waiting for it to become healthy.
    expect(await until(() => processesNaming(dataDir).some((line) => line.includes('graphx.js runtime')), 180_000)).toBe(true);
    process.kill(stack.child.pid!, 'SIGTERM');
    expect(await until(() => processesNaming(dataDir).length === 0, 30_000)).toEqual(true);
  }, 400_000);
});
