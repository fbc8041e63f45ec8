import fs from 'node:fs';
import path from 'node:path';
import { createActivities } from '../../../activities';
import { isProcessAlive } from '@graphx/kit/os/processes';
import { buildPaths } from '../../../src/pipeline/revisionSpec';
import {
  activityEnv,
  createDeployment,
  createTestDeps,
  writeBuild,
  type RevisionOptions,
  type TestDeps,
} from './pipelineFixtures';

describe('buildApplication activity (real processes)', () => {
  let deps: TestDeps;
  beforeAll(() => {
    deps = createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '4' });
  });
  afterAll(() => deps.close());

  const prepare = async (options: RevisionOptions, files: Record<string, string> = {}) => {
    const deployment = await createDeployment(deps.db, deps.secretBox, options);
    const src = writeBuild(deps.config, deployment.revisionId, files);
    return { ...deployment, src, ref: { revisionId: deployment.revisionId, deploymentId: deployment.deploymentId } };
  };
  const logsOf = async (revisionId: string) =>
    (await deps.db('revision_logs').where({ revision_id: revisionId }).orderBy('id').pluck('message')).join('\n');

  it("a build's environment holds the deployment's secrets, PATH and HOME, and none of the control plane's variables", async () => {
    process.env.GRAPHX_CONTROL_PLANE_ONLY = 'must-not-leak';
    try {
      const build = await prepare({
        buildCommand: 'env > env.txt',
        secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test-value' }],
      });
      await activityEnv().run(createActivities(deps).buildApplication, build.ref);
      const env = Object.fromEntries(
        fs
          .readFileSync(path.join(build.src, 'env.txt'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => line.split(/=(.*)/s).slice(0, 2)),
      );
      expect(env.OPENAI_API_KEY).toBe('sk-test-value');
      expect(env.HOME).toBe(path.join(deps.config.dataDir, 'build-home'));
      // sh itself adds PWD (and SHLVL); everything else must come from us.
      expect(
        Object.keys(env)
          .filter((key) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(key))
          .sort(),
      ).toEqual(['HOME', 'OPENAI_API_KEY', 'PATH']);
      expect(JSON.stringify(env)).not.toContain('must-not-leak');
      expect(JSON.stringify(env)).not.toContain(deps.config.secretKey as string);
    } finally {
      delete process.env.GRAPHX_CONTROL_PLANE_ONLY;
    }
  });

  it('a failing build_command is BuildFailed naming the command, its exit code and its last output line', async () => {
    const build = await prepare({ buildCommand: 'echo compiling; echo "error TS2304: cannot find name foo" >&2; exit 2' });
    await expect(activityEnv().run(createActivities(deps).buildApplication, build.ref)).rejects.toMatchObject({
      type: 'BuildFailed',
      nonRetryable: true,
      message: expect.stringMatching(/^`echo compiling; .*` exited with code 2: compiling\nerror TS2304: cannot find name foo$/s),
    });
    expect(await logsOf(build.revisionId)).toContain('error TS2304: cannot find name foo');
  });

  it('secret values printed by a build are masked in the logs and in the failure message', async () => {
    const build = await prepare({
      buildCommand: 'echo "token is $API_TOKEN"; exit 1',
      secrets: [{ name: 'API_TOKEN', value: 'super-secret-42' }],
    });
    const failure = (await activityEnv()
      .run(createActivities(deps).buildApplication, build.ref)
      .catch((error: unknown) => error as Error)) as Error;
    expect(failure.message).toContain('token is ********');
    expect(await logsOf(build.revisionId)).not.toContain('super-secret-42');
  });

  it('heartbeats carry the phase and the last output lines', async () => {
    const build = await prepare({ buildCommand: 'echo step-one; sleep 1.5; echo step-two' });
    const env = activityEnv();
    const beats: Array<{ phase: string; lastLines: string[] }> = [];
    env.on('heartbeat', (details) => beats.push(details));
    await env.run(createActivities(deps).buildApplication, build.ref);
    expect(beats.some((beat) => beat.phase === 'build' && beat.lastLines.includes('step-one'))).toBe(true);
  });

  it('cancellation kills the build process group: no process of the build is left', async () => {
    const build = await prepare({ buildCommand: 'sleep 300 & echo $! > bg.pid; echo $$ > sh.pid; sleep 300' });
    const env = activityEnv();
    const running = env.run(createActivities(deps).buildApplication, build.ref);
    const pidFile = (name: string) => path.join(build.src, name);
    for (let i = 0; i < 100 && !fs.existsSync(pidFile('sh.pid')); i += 1) await new Promise((r) => setTimeout(r, 50));
    const pids = ['bg.pid', 'sh.pid'].map((name) => Number(fs.readFileSync(pidFile(name), 'utf8')));
    expect(pids.every(isProcessAlive)).toBe(true);
    env.cancel();
    await expect(running).rejects.toMatchObject({ name: 'CancelledFailure' });
    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(fs.existsSync(path.join(buildPaths(deps.config.dataDir, build.revisionId).root, 'build.pid'))).toBe(false);
  });

  it('a build past GRAPHX_BUILD_TIMEOUT_SECONDS is killed and fails as BuildFailed', async () => {
    const build = await prepare({ buildCommand: 'echo waiting; sleep 60' });
    const started = Date.now();
    await expect(activityEnv().run(createActivities(deps).buildApplication, build.ref)).rejects.toMatchObject({
      type: 'BuildFailed',
      message: expect.stringContaining('did not finish within the 4 s build time limit: waiting'),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  describe('the no-progress watchdog (GRAPHX_BUILD_STALL_SECONDS=2)', () => {
    let watched: TestDeps;
    beforeAll(() => {
      watched = createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '60', GRAPHX_BUILD_STALL_SECONDS: '2' });
    });
    afterAll(() => watched.close());
    const prepareWatched = async (buildCommand: string) => {
      const deployment = await createDeployment(watched.db, watched.secretBox, { buildCommand });
      writeBuild(watched.config, deployment.revisionId, {});
      return { revisionId: deployment.revisionId, deploymentId: deployment.deploymentId };
    };

    it('stops a build that prints nothing and uses no CPU, failing BuildFailed with its phase and last line', async () => {
      const ref = await prepareWatched('echo waiting for the mirror; sleep 60');
      const started = Date.now();
      await expect(activityEnv().run(createActivities(watched).buildApplication, ref)).rejects.toMatchObject({
        type: 'BuildFailed',
        message: expect.stringMatching(
          /no progress for 2 s[\s\S]*stopped in its "build" phase, after:\n\$ echo waiting[^\n]*\nwaiting for the mirror$/,
        ),
      });
      expect(Date.now() - started).toBeLessThan(15_000);
    });

    it('lets a silent step run on while its processes use CPU', async () => {
      const ref = await prepareWatched('end=$(($(date +%s) + 6)); while [ "$(date +%s)" -lt "$end" ]; do :; done; echo done');
      await activityEnv().run(createActivities(watched).buildApplication, ref);
    });
  });

  it('a re-run after the worker died kills the build the dead attempt left running', async () => {
    const build = await prepare({ buildCommand: 'true' });
    const { spawn } = await import('node:child_process');
    const orphan = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    orphan.unref();
    fs.writeFileSync(path.join(buildPaths(deps.config.dataDir, build.revisionId).root, 'build.pid'), String(orphan.pid));
    await activityEnv().run(createActivities(deps).buildApplication, build.ref);
    await new Promise((r) => setTimeout(r, 100));
    expect(isProcessAlive(orphan.pid)).toBe(false);
  });

  it('the install command defaults by lock file: npm ci for package-lock.json', async () => {
    const build = await prepare(
      { buildCommand: 'echo built' },
      {
        'package.json': '{"name":"tiny","version":"1.0.0","private":true}',
        'package-lock.json':
          '{"name":"tiny","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"tiny","version":"1.0.0"}}}',
      },
    );
    await activityEnv().run(createActivities(deps).buildApplication, build.ref);
    expect(await logsOf(build.revisionId)).toMatch(/\$ npm ci\n[\s\S]*up to date[\s\S]*\$ echo built\nbuilt/);
  });

  it('a missing or malformed graphx.json is ConfigInvalid', async () => {
    const missing = await prepare({ buildCommand: 'true' });
    fs.rmSync(path.join(missing.src, 'graphx.json'));
    await expect(activityEnv().run(createActivities(deps).buildApplication, missing.ref)).rejects.toMatchObject({
      type: 'ConfigInvalid',
      message: expect.stringContaining('graphx.json'),
    });
    const malformed = await prepare({}, { 'graphx.json': '{"graphs": ' });
    await expect(activityEnv().run(createActivities(deps).buildApplication, malformed.ref)).rejects.toMatchObject({
      type: 'ConfigInvalid',
      message: expect.stringContaining('not valid JSON'),
    });
    const escaping = await prepare({ graphxConfigPath: '../../../secret-key' });
    await expect(activityEnv().run(createActivities(deps).buildApplication, escaping.ref)).rejects.toMatchObject({
      type: 'ConfigInvalid',
    });
  });

  it('a node_version outside the offered LTS lines fails ConfigInvalid naming the versions offered', async () => {
    const build = await prepare({}, { 'graphx.json': '{"node_version": "18", "graphs": {"agent": "./graph.js:graph"}}' });
    await expect(activityEnv().run(createActivities(deps).buildApplication, build.ref)).rejects.toMatchObject({
      type: 'ConfigInvalid',
      message: expect.stringContaining('"node_version" "18" is not offered: use 20, 22, 24 (default 24)'),
    });
  });

  it('with the process runner an external_docker revision is not cloned and fails saying it needs the container runner', async () => {
    const revision = await prepare({});
    await deps
      .db('revisions')
      .where({ id: revision.revisionId })
      .update({
        source: 'external_docker',
        source_revision_config: { image_uri: '127.0.0.1:1/team/agent:1' },
      });
    const activities = createActivities(deps);
    await expect(activityEnv().run(activities.cloneRepository, revision.ref)).resolves.toEqual({ repoCommitSha: null });
    await expect(activityEnv().run(activities.buildApplication, revision.ref)).rejects.toMatchObject({
      type: 'BuildFailed',
      message: expect.stringContaining('runs image 127.0.0.1:1/team/agent:1, which needs the container runner'),
    });
  });
});
