/**
 * The container runner on a developer's machine (issue 24, points 1 and 2): a machine with podman but without the rest
 * of the tools gets one sentence naming what is missing and the two ways on, `auto` falls back to the process runner
 * with its warning, and nothing the engine mounted is left in the data dir: it can be deleted right after a stop.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DockerEngine } from '../../src/containers/dockerEngine';
import { writeEngineConfig } from '../../src/containers/engineConfig';
import { mountsUnder } from '../../src/containers/storeMounts';
import { findExecutable } from '../../src/containers/toolCheck';
import { startStack } from '../../src/stack';
import { describeWithEngine, ensureBusyboxImage } from '../support/containerEngine';
import { makeDataDir, testConfig, testEnv } from '../support/env';

const root = path.resolve(__dirname, '..', '..');
/** A base no registry serves (nothing listens on port 9): its pull fails at once, so the base must be built. */
const UNPULLABLE_BASE = '127.0.0.1:9/graphx-missing-base:1';

/** A PATH holding podman and runc but not mmdebstrap, as on a laptop with only podman installed. */
function pathWithoutMmdebstrap(): string {
  const bin = makeDataDir('bin-without-mmdebstrap');
  for (const tool of ['podman', 'runc', 'git', 'sh', 'umount', 'ip', 'nft', 'tar']) {
    const found = findExecutable(tool);
    if (found) fs.symlinkSync(found, path.join(bin, tool));
  }
  return bin;
}

interface Started {
  code: number | null;
  output: string;
}

/** `graphx start` on the test run's PostgreSQL and Temporal; stopped with SIGTERM once it serves (or when it exits). */
async function graphxStart(dataDir: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'graphx.js'), 'start'], {
    cwd: root,
    env: {
      HOME: process.env.HOME,
      GRAPHX_DATA_DIR: dataDir,
      DATABASE_URL: testEnv.databaseUrl(),
      TEMPORAL_ADDRESS: testEnv.temporalAddress(),
      PORT: '0',
      GRAPHX_GATEWAY_PORT: '0',
      GRAPHX_WORKER_METRICS_PORT: '0',
      GRAPHX_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      // The test run's Temporal is shared: task queues of this stack's own (test/support/env.ts).
      GRAPHX_TASK_QUEUE_PREFIX: `test-${crypto.randomBytes(4).toString('hex')}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 120_000;
  while (!output.includes('Press Ctrl-C to stop.') && child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (child.exitCode === null) child.kill('SIGTERM');
  return { code: await exited, output };
}

describeWithEngine('the container runner on a machine with podman but not the other tools', () => {
  it('GRAPHX_RUNNER=container stops start-up with one sentence naming mmdebstrap and the two ways on, leaving no mount', async () => {
    const dataDir = makeDataDir('no-mmdebstrap');
    const started = await graphxStart(dataDir, {
      PATH: pathWithoutMmdebstrap(),
      GRAPHX_RUNNER: 'container',
      GRAPHX_RUNTIME_BASE_IMAGE: UNPULLABLE_BASE,
    });
    expect(started.code).toBe(2);
    const failure = started.output.split('\n').find((line) => line.startsWith('graphx: '));
    expect(failure).toMatch(
      /^graphx: The container runner needs mmdebstrap to build its base image \(127\.0\.0\.1:9\/graphx-missing-base:1 could not be pulled: .*\), and it is not installed: run `bash scripts\/install-container-tools\.sh` to install the container tools, or set GRAPHX_RUNNER=process to run apps as host processes \(not isolated\)\.$/,
    );
    expect(started.output).not.toMatch(/^\s+at /m);
    expect(mountsUnder(dataDir)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true });
  });

  it('GRAPHX_RUNNER=auto falls back to the process runner, warning why and that apps are not isolated', async () => {
    const dataDir = makeDataDir('auto-fallback');
    const started = await graphxStart(dataDir, {
      PATH: pathWithoutMmdebstrap(),
      GRAPHX_RUNNER: 'auto',
      GRAPHX_RUNTIME_BASE_IMAGE: UNPULLABLE_BASE,
    });
    expect(started.output).toContain('graphx platform is running');
    expect(started.code).toBe(0);
    const warnings = started.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string })
      .filter((line) => line.level === 40);
    expect(warnings).toContainEqual(
      expect.objectContaining({
        msg: 'the container runner is not available; using processes',
        reason: expect.stringContaining('The container runner needs mmdebstrap'),
      }),
    );
    expect(warnings.map((line) => line.msg)).toContainEqual(expect.stringContaining('NOT isolated'));
    expect(mountsUnder(dataDir)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true });
  });
});

describeWithEngine("the stack's own container engine", () => {
  it('leaves no mount of its store behind: the data dir can be deleted right after stop, after a container ran', async () => {
    const config = testConfig({ GRAPHX_RUNNER: 'container', GRAPHX_RUNTIME_BASE_IMAGE: 'offline' });
    const stack = await startStack(config, { worker: false, workflowBundlePath: testEnv.workflowBundlePath() });
    const storeDir = path.join(config.dataDir, 'containers', 'store');
    try {
      expect(mountsUnder(storeDir).length).toBeGreaterThan(0);
      const files = writeEngineConfig({ dir: path.join(config.dataDir, 'containers'), storeDir });
      const engine = new DockerEngine(path.join(files.dir, 'engine.sock'), files.ulimits);
      const image = await ensureBusyboxImage(engine);
      const name = `graphx-mount-probe-${crypto.randomBytes(3).toString('hex')}`;
      await engine.runContainer({ name, image, cmd: ['/bin/sh', '-c', 'echo ran'], network: 'none' });
      expect(await engine.waitContainer(name)).toBe(0);
    } finally {
      await stack.stop();
    }
    expect(mountsUnder(config.dataDir)).toEqual([]);
    fs.rmSync(config.dataDir, { recursive: true });
    expect(fs.existsSync(config.dataDir)).toBe(false);
  }, 180_000);
});
