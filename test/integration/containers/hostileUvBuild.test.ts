/**
 * A hostile tenant's uv project (graphx.json "source": {"kind": "uv"}), through the real pipeline activities on both
 * runners, by the same test bodies. uv runs a repository's code in our BUILD in one shape only (found by experiment,
 * docs/decisions.md "Hostile uv builds"): a local package of the lock (a path source, a workspace member) whose
 * dependencies only its setup.py or build backend knows, which `uv export --locked` builds to check the lock. The
 * fixture (test/fixtures/apps/hostile-build-uv) is that shape, its setup.py the probes hostilePythonBuild.test.ts's
 * setup.py runs, writing a marker and its results where the build would leave them. The helper refuses the shape
 * before uv runs, on both runners; given the static [project] table the message asks for, the same package builds
 * and its setup.py still never runs (uv reads the table; the package is not installed, its folder is imported).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../../../activities';
import { DEFAULT_BUILD_LIMITS, RevisionImages } from '../../../src/containers/revisionImages';
import { podmanAvailable, startTestEngine } from '../../support/containerEngine';
import { testEnv } from '../../support/env';
import { createGitRepo, type GitRepo } from '../../support/gitRepos';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';
import { activityEnv, createDeployment, createTestDeps, withImageBuilder, type TestDeps } from '../activities/pipelineFixtures';

jest.setTimeout(600_000);

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'hostile-build-uv');
/** In the worker's own environment, as a control-plane secret would be: no build may see it. */
const MARKER = `graphx-hostile-uv-marker-${crypto.randomBytes(6).toString('hex')}`;
/** The static metadata the refusal asks for: the same package, name, version and (no) dependencies in [project]. */
const STATIC_PROJECT = '[project]\nname = "probe"\nversion = "0.0.1"\nrequires-python = ">=3.11"\ndependencies = []\n';

interface Runner {
  name: 'process' | 'container';
  /** Where the probes' results would be, as the build command sees it (on the host; in the image). */
  results: string;
  /** The runner's builder on the test database, and what removes the images it built (container). */
  start: () => Promise<{ deps: TestDeps; removeImage: (ref: string) => Promise<void> }>;
}

const RUNNERS: Runner[] = [
  {
    name: 'process',
    results: path.join(os.tmpdir(), `graphx-hostile-uv-results-${crypto.randomBytes(4).toString('hex')}`),
    start: async () => ({ deps: createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '400' }), removeImage: async () => {} }),
  },
  {
    name: 'container',
    results: '/home/graphx/uv-probe-results.json',
    start: async () => {
      const { engine } = await startTestEngine();
      const runtime = await ensureTestRuntimeImage(engine);
      const deps = withImageBuilder(
        createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '400' }),
        new RevisionImages(engine, runtime.ref, DEFAULT_BUILD_LIMITS),
      );
      return { deps, removeImage: (ref) => engine.removeImage(ref).catch(() => undefined) };
    },
  },
];

/** The doors the setup.py tries, as hostilePythonBuild.test.ts aims them: this machine's real services and files. */
function targets(deps: TestDeps, hostPort: number, runner: Runner, markerFile: string) {
  const ports = [
    Number(new URL(testEnv.databaseUrl()).port || 5432),
    Number(testEnv.temporalAddress().split(':').at(-1)),
    hostPort,
  ];
  const hosts = ['127.0.0.1', '10.88.0.1', 'host.containers.internal', ...hostAddresses()];
  return {
    marker: MARKER,
    marker_file: markerFile,
    results: runner.results,
    secret_files: ['secret-key', 'api-key'].map((name) => path.join(deps.config.dataDir, name)),
    direct: [...hosts.flatMap((host) => ports.map((port) => ({ host, port }))), { host: '169.254.169.254', port: 80 }],
    proxied: [`10.88.0.1:${hostPort}`, `127.0.0.1:${ports[0]}`, 'example.com:443', '169.254.169.254:443'],
  };
}

describe.each(RUNNERS.filter((runner) => runner.name === 'process' || podmanAvailable()))(
  'a hostile uv project: a path source whose setup.py probes the build ($name runner)',
  (runner) => {
    let deps: TestDeps;
    let removeImage: (ref: string) => Promise<void>;
    const images: string[] = [];
    let hostServer: http.Server;
    let repo: GitRepo;
    const markerFile = path.join(os.tmpdir(), `graphx-hostile-uv-marker-${crypto.randomBytes(4).toString('hex')}`);

    beforeAll(async () => {
      process.env.GRAPHX_HOSTILE_UV_MARKER = MARKER;
      ({ deps, removeImage } = await runner.start());
      for (const name of ['secret-key', 'api-key']) {
        fs.writeFileSync(path.join(deps.config.dataDir, name), crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
      }
      hostServer = http.createServer((_request, response) => response.end('host'));
      await new Promise<void>((resolve) => hostServer.listen(0, '0.0.0.0', resolve));
      repo = createGitRepo(FIXTURE);
      const aim = targets(deps, (hostServer.address() as AddressInfo).port, runner, markerFile);
      repo.commit('aim', { 'targets.json': JSON.stringify(aim, null, 2) });
    }, IMAGE_BUILD_HOOK_MS);

    afterAll(async () => {
      delete process.env.GRAPHX_HOSTILE_UV_MARKER;
      hostServer?.closeAllConnections();
      await new Promise((resolve) => hostServer?.close(resolve));
      for (const ref of images) await removeImage(ref);
      for (const file of [markerFile, runner.results]) fs.rmSync(file, { force: true });
      await deps?.close();
    });

    /** Clones and builds `ref`; the outcome, the build log and whether the probes' results reached it. */
    const build = async (ref: string) => {
      const deployment = await createDeployment(deps.db, deps.secretBox, {
        repoUrl: repo.url,
        repoRef: ref,
        // The results, had the setup.py run: in the environment's layer (container) or on the host (process).
        buildCommand: `if [ -e ${runner.results} ]; then echo "PROBES $(cat ${runner.results})"; else echo "no probe results"; fi`,
      });
      const activities = createActivities(deps);
      await activityEnv().run(activities.cloneRepository, deployment);
      const outcome = await activityEnv()
        .run(activities.buildApplication, deployment)
        .then(
          () => null,
          (error: Error) => error,
        );
      const lines = await deps.db('revision_logs').where({ revision_id: deployment.revisionId }).orderBy('id').pluck('message');
      images.push(RevisionImages.tagFor(deployment.deploymentId, deployment.revisionId));
      return { outcome, log: (lines as string[]).join('\n') };
    };

    it(`${runner.name}: a lock whose path source declares its dependencies only in setup.py fails BUILD naming it, and none of its code runs`, async () => {
      const { outcome, log } = await build('main');
      const refusal =
        "uv.lock's local package probe (vendor/probe) has no static dependencies: vendor/probe/pyproject.toml does not exist. " +
        "uv would build it to learn them, running the repository's setup.py or build backend, which builds never do";
      expect(outcome?.message).toContain(refusal);
      expect(log).toContain(refusal);
      expect(log).not.toMatch(/^PROBES /m);
      expect(fs.existsSync(markerFile)).toBe(false);
    });

    it(`${runner.name}: given the static [project] table the refusal asks for, the same package builds and its setup.py still never runs`, async () => {
      repo.branch(`${runner.name}-static`, true);
      // A nonce: the environment's layer is built, not found cached from an earlier run, so uv's own lines are logged.
      const nonce = `# nonce ${crypto.randomBytes(6).toString('hex')}\n`;
      repo.commit('static metadata', { 'vendor/probe/pyproject.toml': nonce + STATIC_PROJECT });
      repo.checkout('main');
      const { outcome, log } = await build(`${runner.name}-static`);
      expect(outcome).toBeNull();
      expect(log).toMatch(/^uv\.lock: \d+ locked packages for hostile-app/m);
      expect(log).toContain('no probe results');
      expect(log).not.toMatch(/^PROBES /m);
      expect(fs.existsSync(markerFile)).toBe(false);
    });
  },
);

/** This machine's own IPv4 addresses (its interfaces and the engine's bridge, once one exists). */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((address) => address !== undefined && address.family === 'IPv4' && !address.internal)
    .map((address) => address!.address);
}
