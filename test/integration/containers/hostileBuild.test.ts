/**
 * A hostile tenant's image build, on real podman through the real RevisionImages build: its build_command and its
 * dockerfile_lines try to leave the build container (fixture test/fixtures/apps/hostile-build/probes.mjs, aimed at
 * this machine's real control plane files, database, Temporal and a host server), and each attempt is asserted
 * denied or contained from the build log. A second repository shows the one step with network, the dependency
 * install, still reaching the npm registry while it cannot reach the host.
 */
import type { ImageBuilder } from '../../../src/builders/image/imageBuilder';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../../../activities';
import { BUILD_PIDS_LIMIT, DEFAULT_BUILD_LIMITS, RevisionImages } from '../../../src/containers/revisionImages';
import {
  deploymentDatabaseName,
  deploymentDatabasePassword,
  ensureDeploymentDatabase,
} from '../../../src/pipeline/deploymentDatabase';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import { describeWithEngine, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { testEnv } from '../../support/env';
import { createGitRepo, type GitRepo } from '../../support/gitRepos';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';
import { activityEnv, createDeployment, createTestDeps, withImageBuilder, type TestDeps } from '../activities/pipelineFixtures';

// A first run on a machine builds the base and runtime images and fills the npm layer.
jest.setTimeout(600_000);

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'hostile-build');
/** The lock file of a one-dependency app (is-number): a real, quick install from the npm registry. */
const NETWORK_FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'build-network');
/** Small for the test, so the allocation probe meets it quickly; the npm layer of the fixture is cached. */
const BUILD_MEMORY_MB = 512;
/** In the worker's own environment, as a control-plane secret would be: no build may see it. */
const MARKER = `graphx-hostile-build-marker-${crypto.randomBytes(6).toString('hex')}`;

interface ProbeResult {
  reached: boolean | null;
  detail: unknown;
}

describeWithEngine('a hostile tenant build (real podman, RevisionImages), each attempt denied or contained', () => {
  let test: TestEngine;
  let deps: TestDeps & { builder: ImageBuilder };
  let hostServer: http.Server;
  const hostFiles: string[] = [];
  const images: string[] = [];
  let log = '';
  let outcome: Error | null = null;

  /** Clones and builds a revision; returns the build's outcome and log. */
  const cloneAndBuild = async (ref: { revisionId: string; deploymentId: string }) => {
    const activities = createActivities(deps);
    await activityEnv().run(activities.cloneRepository, ref);
    const result = await activityEnv()
      .run(activities.buildApplication, ref)
      .then(
        () => null,
        (error: Error) => error,
      );
    const lines = await deps.db('revision_logs').where({ revision_id: ref.revisionId }).orderBy('id').pluck('message');
    const spec = await loadRevisionSpec(deps.db, deps.secretBox, ref.revisionId);
    if (spec.image) images.push(spec.image.ref);
    return { outcome: result, log: (lines as string[]).join('\n') };
  };

  /** The result a probe printed into the build log (`PROBE <step>:<name> <json>`). */
  const probe = (step: string, name: string): ProbeResult => {
    const prefix = `PROBE ${step}:${name} `;
    const line = log.split('\n').find((entry) => entry.startsWith(prefix));
    if (!line) throw new Error(`the build log has no ${prefix.trim()} line:\n${log.slice(-3000)}`);
    return JSON.parse(line.slice(prefix.length)) as ProbeResult;
  };

  beforeAll(async () => {
    process.env.GRAPHX_HOSTILE_BUILD_MARKER = MARKER;
    test = await startTestEngine();
    const runtime = await ensureTestRuntimeImage(test.engine);
    deps = withImageBuilder(
      createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '300' }),
      new RevisionImages(test.engine, runtime.ref, { ...DEFAULT_BUILD_LIMITS, memoryMb: BUILD_MEMORY_MB }),
    );
    // The control plane's key files, where a real data dir holds them: a build that could read them would.
    fs.writeFileSync(path.join(deps.config.dataDir, 'secret-key'), crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
    fs.writeFileSync(path.join(deps.config.dataDir, 'api-key'), `lsv2_${crypto.randomBytes(16).toString('hex')}`, {
      mode: 0o600,
    });
    // A server of the host on every interface: a build with any route to the host would reach it.
    hostServer = http.createServer((_request, response) => response.end('host'));
    await new Promise<void>((resolve) => hostServer.listen(0, '0.0.0.0', resolve));
    hostFiles.push(
      path.join(deps.config.dataDir, 'written-by-build'),
      path.join(os.tmpdir(), `graphx-hostile-build-${crypto.randomBytes(4).toString('hex')}`),
    );

    const other = await createDeployment(deps.db, deps.secretBox, {});
    await ensureDeploymentDatabase(deps.db, deps.secretBox, other.deploymentId);
    const otherDatabaseUri = new URL(testEnv.databaseUrl());
    otherDatabaseUri.username = deploymentDatabaseName(other.deploymentId);
    otherDatabaseUri.password = deploymentDatabasePassword(deps.secretBox, other.deploymentId);
    otherDatabaseUri.pathname = `/${deploymentDatabaseName(other.deploymentId)}`;

    const targets = {
      dataDir: deps.config.dataDir,
      marker: MARKER,
      controlPlaneVariables: [
        'GRAPHX_HOSTILE_BUILD_MARKER',
        'GRAPHX_TEST_DATABASE_URL',
        'GRAPHX_TEST_TEMPORAL_ADDRESS',
        'JEST_WORKER_ID',
      ],
      // The control plane's own database URL, superuser password included: the network must stop it, not a password.
      controlDatabaseUri: testEnv.databaseUrl(),
      otherDatabaseUri: otherDatabaseUri.toString(),
      temporalPort: Number(testEnv.temporalAddress().split(':').at(-1)),
      hostServerPort: (hostServer.address() as AddressInfo).port,
      hostAddresses: hostAddresses(),
      hostFiles,
      allocateMb: 4 * BUILD_MEMORY_MB,
    };
    const repo: GitRepo = createGitRepo(FIXTURE);
    repo.commit('aim', { 'targets.json': JSON.stringify(targets, null, 2) });
    const deployment = await createDeployment(deps.db, deps.secretBox, {
      repoUrl: repo.url,
      buildCommand:
        'node probes.mjs build_command secret-files environ control-database other-database temporal network write-outside fork memory',
    });
    ({ outcome, log } = await cloneAndBuild(deployment));
  }, IMAGE_BUILD_HOOK_MS);

  afterAll(async () => {
    delete process.env.GRAPHX_HOSTILE_BUILD_MARKER;
    for (const ref of images) await test.engine.removeImage(ref);
    hostServer?.closeAllConnections();
    await new Promise((resolve) => hostServer?.close(resolve));
    for (const file of hostFiles) fs.rmSync(file, { force: true });
    await deps?.close();
  });

  it('the build itself completes: every probe reported into the build log', () => {
    expect(outcome).toBeNull();
    expect(log).toContain('PROBE build_command:memory');
    expect(log).toContain('PROBE dockerfile_lines:network');
  });

  it("cannot read the control plane data dir's secret-key and api-key", () => {
    expect(probe('build_command', 'secret-files')).toEqual({ reached: false, detail: [] });
  });

  it('sees no host process in /proc and no control-plane variable in any environment', () => {
    const result = probe('build_command', 'environ') as { reached: boolean; detail: { foreign: string[]; commands: string[] } };
    expect(result.reached).toBe(false);
    expect(result.detail.foreign).toEqual([]);
    // Only the build step's own processes: its shell and the probe (and the probe's children). Node 24 names its main
    // thread, which is the process's comm on Linux: `MainThread` (nodejs/node#56416; `node-MainThread` from #61307).
    const own = ['sh', 'node', 'MainThread', 'node-MainThread'];
    expect(result.detail.commands.filter((command) => !own.includes(command))).toEqual([]);
  });

  it("cannot reach the control-plane database (loopback, the host's addresses, the bridge gateway), even with its password", () => {
    expect(probe('build_command', 'control-database')).toMatchObject({ reached: false });
  });

  it("cannot reach another deployment's database with that deployment's own role and password", () => {
    expect(probe('build_command', 'other-database')).toMatchObject({ reached: false });
  });

  it('cannot reach the Temporal frontend', () => {
    expect(probe('build_command', 'temporal')).toMatchObject({ reached: false });
  });

  it('has no network at all in build_command and dockerfile_lines: no host server, no registry, no internet', () => {
    expect(probe('build_command', 'network')).toMatchObject({ reached: false });
    expect(probe('dockerfile_lines', 'network')).toMatchObject({ reached: false });
  });

  it('writes nothing outside its own filesystem: the paths it wrote do not exist on the host', () => {
    probe('build_command', 'write-outside');
    for (const file of hostFiles) expect(fs.existsSync(file)).toBe(false);
  });

  it('cannot fork without bound: the build pids limit stops it', () => {
    const result = probe('build_command', 'fork') as { reached: boolean; detail: { started: number; failure: string } };
    expect(result).toMatchObject({ reached: false, detail: { failure: expect.any(String) } });
    expect(result.detail.started).toBeLessThan(BUILD_PIDS_LIMIT);
    expect(result.detail.started).toBeGreaterThan(10);
  });

  it('cannot allocate past the build memory limit: the allocating process is killed', () => {
    const result = probe('build_command', 'memory') as { reached: boolean; detail: { signal: string; heldMb: number } };
    expect(result).toMatchObject({ reached: false, detail: { signal: 'SIGKILL' } });
    expect(result.detail.heldMb).toBeLessThanOrEqual(BUILD_MEMORY_MB);
  });

  it('the dependency install reaches only the package registries: through the proxy, not directly, not the host', async () => {
    const nonce = crypto.randomBytes(6).toString('hex');
    const hostPort = (hostServer.address() as AddressInfo).port;
    const ports = [
      Number(new URL(testEnv.databaseUrl()).port || 5432),
      Number(testEnv.temporalAddress().split(':').at(-1)),
      hostPort,
    ];
    const hosts = ['127.0.0.1', '10.88.0.1', 'host.containers.internal', ...hostAddresses()];
    const direct = [
      ...hosts.flatMap((host) => ports.map((port) => ({ host, port }))),
      { host: 'registry.npmjs.org', port: 443 },
      { host: '169.254.169.254', port: 80 },
    ];
    const proxied = [
      `10.88.0.1:${hostPort}`,
      `127.0.0.1:${ports[0]}`,
      'example.com:443',
      'registry.npmjs.org:80',
      '169.254.169.254:443',
    ];
    // The install's own lifecycle script (code the tenant controls) probes; the nonce defeats the layer cache.
    const code = [
      "const net=require('net'),http=require('http');",
      `const direct=${JSON.stringify(direct)},proxied=${JSON.stringify(proxied)};`,
      'const tcp=({host,port})=>new Promise(r=>{const s=net.connect({host,port,timeout:1500});',
      "s.on('connect',()=>(s.destroy(),r(host+':'+port)));s.on('timeout',()=>(s.destroy(),r(null)));s.on('error',()=>r(null))});",
      "const via=(target)=>new Promise(r=>{const q=http.request({host:'127.0.0.1',port:3128,method:'CONNECT',path:target,timeout:5000});",
      "q.on('connect',(res,sock)=>(sock.destroy(),r(res.statusCode===200?target:null)));q.on('error',()=>r(null));",
      "q.on('timeout',()=>(q.destroy(),r(null)));q.end()});",
      "via('registry.npmjs.org:443').then(t=>console.log('PROBE install:registry '+JSON.stringify({reached:Boolean(t)})));",
      'Promise.all([...direct.map(tcp),...proxied.map(via)]).then(a=>',
      "console.log('PROBE install:egress '+JSON.stringify({reached:a.some(Boolean),detail:a.filter(Boolean)})));",
    ]
      .join('')
      .replaceAll('"', "'");
    const postinstall = `node -e "${code}"`;
    const repo = createGitRepo(null);
    repo.commit('tiny app', {
      'package.json': JSON.stringify(
        {
          name: 'build-network',
          version: '1.0.0',
          private: true,
          description: `nonce ${nonce}`,
          scripts: { postinstall },
          dependencies: { 'is-number': '7.0.0' },
        },
        null,
        2,
      ),
      'package-lock.json': fs.readFileSync(path.join(NETWORK_FIXTURE, 'package-lock.json'), 'utf8'),
      'graphx.json': JSON.stringify({ graphs: { agent: './graph.js:graph' } }),
      'graph.js': 'export const graph = null;\n',
    });
    const deployment = await createDeployment(deps.db, deps.secretBox, {
      repoUrl: repo.url,
      buildCommand: 'test -f node_modules/is-number/index.js && echo "installed is-number"',
    });
    const built = await cloneAndBuild(deployment);
    expect(built.outcome).toBeNull();
    expect(built.log).toContain('installed is-number');
    const result = (name: string) => {
      const line = built.log.split('\n').find((entry) => entry.startsWith(`PROBE install:${name} `));
      if (!line) throw new Error(`no install:${name} probe in the build log:\n${built.log.slice(-3000)}`);
      return JSON.parse(line.slice(`PROBE install:${name} `.length)) as ProbeResult;
    };
    expect(result('registry')).toEqual({ reached: true });
    expect(result('egress')).toEqual({ reached: false, detail: [] });
  });
});

/** This machine's own IPv4 addresses (its interfaces and the engine's bridge, once one exists). */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((address) => address !== undefined && address.family === 'IPv4' && !address.internal)
    .map((address) => address!.address);
}
