/**
 * `graphx` CI commands as a CI job runs them: a real child process of bin/graphx.js against a real stack (API, outbox
 * relay, Temporal dev server, worker, git, npm), output through pipes (no TTY). One stack for every case.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { testEnv } from '../support/env';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const GRAPHX = path.resolve(__dirname, '..', '..', 'bin', 'graphx.js');
const ESCAPE = /\x1b/;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('graphx CLI against a real stack', () => {
  let pipeline: PipelineStack;
  let repo: GitRepo;

  beforeAll(async () => {
    pipeline = await startPipelineStack();
    repo = createGitRepo(FIXTURE);
    repo.branch('v2');
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  /** Starts the CLI with a clean environment (no CI or GitHub variables of the machine running the tests). */
  function startCli(args: string[], env: Record<string, string> = {}) {
    const child = spawn(process.execPath, [GRAPHX, ...args], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: testEnv.runDir(),
        GRAPHX_API_URL: pipeline.stack.apiUrl,
        GRAPHX_API_KEY: pipeline.apiKey,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run: CliRun = { code: null, stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    const done = new Promise<CliRun>((resolve) =>
      child.on('close', (code) => {
        run.code = code;
        resolve(run);
      }),
    );
    const stderrShows = async (pattern: RegExp) => {
      for (let i = 0; i < 600 && !pattern.test(run.stderr); i += 1) {
        if (run.code !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(run.stderr).toMatch(pattern);
    };
    return { child, done, stderrShows };
  }
  const cli = (args: string[], env: Record<string, string> = {}) => startCli(args, env).done;
  const newName = (prefix: string) => `${prefix}-${crypto.randomBytes(3).toString('hex')}`;
  const revisionOf = async (deploymentId: string, revisionId: string) =>
    (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;

  it('deploys to DEPLOYED with exit 0, the URL alone on stdout, $GITHUB_OUTPUT written and no escape codes on stderr', async () => {
    const name = newName('cli');
    const outputFile = path.join(testEnv.runDir(), `github-output-${name}`);
    const run = await cli(['deploy', '--name', name, '--repo-url', repo.url, '--ref', 'main', '--secret', 'CLI_TOKEN'], {
      CLI_TOKEN: 'very-secret-token-value',
      GITHUB_ACTIONS: 'true',
      GITHUB_OUTPUT: outputFile,
    });
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
    expect(run.stdout).toBe(`${pipeline.stack.gatewayUrl}/${name}\n`);
    expect(run.stderr).toMatch(/BUILDING/);
    expect(run.stderr).toMatch(/::group::/);
    expect(run.stderr).not.toMatch(ESCAPE);
    expect(run.stderr + run.stdout).not.toContain('very-secret-token-value');
    const outputs = Object.fromEntries(
      fs
        .readFileSync(outputFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2)),
    );
    expect(outputs).toMatchObject({ url: `${pipeline.stack.gatewayUrl}/${name}`, status: 'DEPLOYED' });
    const revision = await revisionOf(outputs.deployment_id, outputs.revision_id);
    expect(revision.status).toBe('DEPLOYED');
    expect(revision.secrets).toEqual([{ name: 'CLI_TOKEN', value: '********' }]);

    // The same name again updates the deployment: a new revision, followed as JSON events.
    const json = await cli(['deploy', '--name', name, '--ref', 'v2', '--json']);
    expect(json.code).toBe(0);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; status?: string; revision_id?: string; url?: string });
    expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(['status_change', 'step', 'log', 'result']));
    const result = events[events.length - 1];
    expect(result).toMatchObject({ event: 'result', status: 'DEPLOYED', url: `${pipeline.stack.gatewayUrl}/${name}` });
    expect(result?.revision_id).not.toBe(outputs.revision_id);
    expect(events.filter((event) => event.event === 'status_change').map((event) => event.status)).toContain('DEPLOYED');
  });

  it('ends a failing build with exit 1 and the last log lines plus the command to see them all on stderr', async () => {
    const name = newName('cli-fail');
    const run = await cli(['deploy', '--name', name, '--repo-url', repo.url, '--build-command', 'echo boom-marker-42; exit 7']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/BUILD_FAILED/);
    expect(run.stderr).toMatch(/last \d+ log lines[\s\S]*boom-marker-42/);
    expect(run.stderr).toMatch(/graphx logs [0-9a-f-]{36} --revision [0-9a-f-]{36} --type build/);
    expect(run.stderr).not.toMatch(ESCAPE);
  });

  it('exits 3 on timeout, stops waiting on Ctrl-C with the revision still running, and exits 5 for a revision superseded while queued', async () => {
    const name = newName('cli-slow');
    const slow = await cli(['deploy', '--name', name, '--repo-url', repo.url, '--build-command', 'sleep 120', '--timeout', '3s']);
    expect(slow.code).toBe(3);
    expect(slow.stderr).toMatch(/Timed out/);
    const [, revisionId, deploymentId] = /graphx wait ([0-9a-f-]{36}) --deployment ([0-9a-f-]{36})/.exec(slow.stderr) ?? [];
    expect(revisionId).toBeDefined();

    const waiting = startCli(['wait', revisionId as string, '--deployment', name]);
    await waiting.stderrShows(/BUILDING/);
    waiting.child.kill('SIGINT');
    const stopped = await waiting.done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain(`graphx wait ${revisionId} --deployment ${deploymentId}`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await revisionOf(deploymentId as string, revisionId as string)).status).toBe('BUILDING');

    // Two more revisions while the slow one builds: the middle one is skipped once the slow one ends.
    const queued = await cli(['deploy', '--name', name, '--ref', 'v2', '--build-command', 'true', '--no-wait']);
    expect(queued.code).toBe(0);
    const queuedRevision = queued.stdout.trim();
    expect((await cli(['deploy', '--name', name, '--ref', 'main', '--no-wait'])).code).toBe(0);
    const superseded = startCli(['wait', queuedRevision, '--deployment', deploymentId as string]);
    await superseded.stderrShows(/QUEUED/);
    expect((await cli(['revisions', 'interrupt', name, revisionId as string])).code).toBe(0);
    const skipped = await superseded.done;
    expect({ code: skipped.code, stderr: skipped.stderr }).toMatchObject({ code: 5 });
    expect(skipped.stderr).toMatch(/SKIPPED/);
    expect((await cli(['deployments', 'delete', name])).code).toBe(0);
  });

  it('exits 4 when the API refuses the key and 2 on a usage error, and prints its version', async () => {
    const refused = await cli(['deployments', 'list'], { GRAPHX_API_KEY: 'not-a-key' });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/refused the key \(401\)/);
    expect((await cli(['deploy', '--no-such-flag'])).code).toBe(2);
    const version = await cli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(
      JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')).version,
    );
  });
});
