import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { createApp } from '../../../src/api/app';
import { packageClosure } from '../../../src/containers/runtimeImage';
import { ContainerTarget } from '../../../src/targets/container';
import {
  CONTAINER_PORT,
  containerName,
  deploymentNetworkName,
  PIDS_LIMIT,
} from '../../../src/targets/container/containerInstances';
import { deploymentDatabaseName, ensureDeploymentDatabase } from '../../../src/pipeline/deploymentDatabase';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import { InstanceStore } from '../../../src/db/repositories/instances';
import { pythonConfigOf, type PythonConfig } from '@graphx/contract/pythonConfig';
import { RUNTIME_UID } from '@graphx/contract/image';
import { pythonLayerLines, stagePythonInputs } from '../../../src/containers/pythonLayer';
import { describeWithEngine, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';
import { testConfig, testDb, testEnv, testSecretBox, testTemporalClient } from '../../support/env';
import { createDeployment, type RevisionOptions } from '../activities/pipelineFixtures';

// The first run on a machine builds the offline base and the runtime image.
jest.setTimeout(300_000);

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'apps');

/** The languages a tenant's app is written in: the hostile app of each, and how its probes are put on the image. */
type Language = 'javascript' | 'python';

/**
 * A fixture repo on the runtime image. JavaScript: the runtime serving its graph, or (secret PROBES=1) the probe server
 * of `hostile-tenant`. Python: the runtime serving `hostile-tenant-py`'s graph from the Python executor, in the app's
 * environment made by the very layer a revision image gets (`pythonLayerLines`; the build's own network here).
 */
async function ensureFixtureImage(test: TestEngine, language: Language = 'javascript'): Promise<string> {
  const runtime = await ensureTestRuntimeImage(test.engine);
  const fixture = path.join(FIXTURES, language === 'python' ? 'hostile-tenant-py' : 'hostile-tenant');
  // How the image is put together counts too (this function's own text), not only the fixture's files.
  const fixtureHash = crypto.createHash('sha256').update(ensureFixtureImage.toString());
  for (const file of fs.readdirSync(fixture, { recursive: true, encoding: 'utf8' }).sort()) {
    const full = path.join(fixture, file);
    if (fs.statSync(full).isFile()) fixtureHash.update(file).update(fs.readFileSync(full));
  }
  const ref = `localhost/graphx-test-hostile-${language}:${runtime.contentHash.slice(0, 12)}-${fixtureHash.digest('hex').slice(0, 12)}`;
  if (await test.engine.inspectImage(ref)) return ref;
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-hostile-'));
  try {
    fs.cpSync(fixture, path.join(context, 'app'), { recursive: true });
    let lines: string[];
    if (language === 'python') {
      const python = pythonConfigOf(JSON.parse(fs.readFileSync(path.join(fixture, 'graphx.json'), 'utf8')), [
        { language: 'python' },
      ]) as PythonConfig;
      stagePythonInputs(context, path.join(context, 'app'), python);
      const run = (command: string) => `RUN ${JSON.stringify(['/bin/sh', '-c', command])}`;
      lines = [...pythonLayerLines(python, `${RUNTIME_UID}:${RUNTIME_UID}`, run), 'COPY app /app'];
    } else {
      // What an install step would put in the repository's node_modules: the packages its graph imports.
      const projectRoot = path.join(__dirname, '..', '..', '..');
      for (const dir of packageClosure(projectRoot, ['@langchain/langgraph', '@langchain/core'])) {
        fs.cpSync(path.join(projectRoot, dir), path.join(context, 'app', dir), { recursive: true, dereference: true });
      }
      lines = [
        'COPY app /app',
        'CMD ["sh", "-c", "if [ \\"$PROBES\\" = 1 ]; then exec node /app/probes.mjs; else exec node /opt/graphx/bin/graphx.js runtime; fi"]',
      ];
    }
    fs.writeFileSync(path.join(context, 'Dockerfile'), [`FROM ${runtime.ref}`, ...lines, ''].join('\n'));
    await test.engine.buildImage({ contextDir: context, tag: ref });
    return ref;
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const answers = async (url: string) => {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(5000) })).status === 200;
  } catch {
    return false;
  }
};

describeWithEngine('ContainerTarget (real podman, real PostgreSQL, runtime image)', () => {
  let test: TestEngine;
  let image: string;
  const config = testConfig();
  const db = testDb();
  const secretBox = testSecretBox(config);
  let target: ContainerTarget;
  let closeGateway: () => Promise<void>;
  let api: http.Server;
  let temporal: Awaited<ReturnType<typeof testTemporalClient>>;

  beforeAll(async () => {
    test = await startTestEngine();
    image = await ensureFixtureImage(test);
    target = new ContainerTarget({
      config,
      db,
      secretBox,
      engine: test.engine,
      timings: { healthTimeoutMs: 60_000, routeSettleMs: 700, drainTimeoutMs: 5_000 },
    });
    closeGateway = await target.startGateway();
    temporal = await testTemporalClient();
    api = http.createServer(createApp({ config, db, secretBox, temporal }).callback());
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    target.setControlPlaneUrl(`http://127.0.0.1:${(api.address() as AddressInfo).port}`);
  }, IMAGE_BUILD_HOOK_MS);

  afterAll(async () => {
    await target?.stopAll(1000);
    await closeGateway?.();
    api?.closeAllConnections();
    await new Promise((resolve) => api?.close(resolve));
    await temporal?.connection.close();
    await db.destroy();
  });

  const deploy = async (options: RevisionOptions, imageRef = image) => {
    const deployment = await createDeployment(db, secretBox, options);
    await ensureDeploymentDatabase(db, secretBox, deployment.deploymentId);
    await db('revisions').where({ id: deployment.revisionId }).update({ image_ref: imageRef });
    const url = await target.rollout(await loadRevisionSpec(db, secretBox, deployment.revisionId));
    return { ...deployment, url };
  };
  const inspect = (id: string) => new Docker({ socketPath: test.service.socketPath }).getContainer(containerName(id)).inspect();

  describe('the runtime serving a revision image', () => {
    let app: Awaited<ReturnType<typeof deploy>>;
    // The worker that restarted: its socket forwarders replaced the first target's (as after a real restart).
    let restarted: ContainerTarget | undefined;
    afterAll(() => (restarted as unknown as { instances?: { close: () => void } } | undefined)?.instances?.close());
    beforeAll(async () => {
      app = await deploy({ resourceSpec: { min_scale: 2, cpu: 0.25, cpu_limit: 0.5, memory_mb: 128, memory_limit_mb: 256 } });
    });

    it('answers through the gateway from min_scale containers, each confined as the issue lists', async () => {
      expect(await answers(`${app.url}/ok`)).toBe(true);
      const rows = await new InstanceStore(db).live(app.deploymentId);
      expect(rows.map((row) => row.status)).toEqual(['serving', 'serving']);
      for (const row of rows) {
        const info = await inspect(row.id);
        expect(info.State.Running).toBe(true);
        expect(info.Config.User).toBe('10001:10001');
        expect(info.HostConfig).toMatchObject({
          ReadonlyRootfs: true,
          Memory: 256 * 1024 * 1024,
          MemoryReservation: 128 * 1024 * 1024,
          NanoCpus: 0.5e9,
          PidsLimit: PIDS_LIMIT,
          SecurityOpt: expect.arrayContaining(['no-new-privileges']),
        });
        expect(info.HostConfig.CapDrop?.length).toBeGreaterThan(10);
        expect(info.HostConfig.NetworkMode).not.toBe('host');
        expect(Object.values(info.HostConfig.PortBindings ?? {}).flat()).toEqual([
          { HostIp: '127.0.0.1', HostPort: String(row.port) },
        ]);
      }
    });

    it('a new ContainerTarget (a restarted worker) adopts the running containers instead of starting others', async () => {
      const before = (await new InstanceStore(db).live(app.deploymentId)).map((row) => row.id);
      restarted = new ContainerTarget({ ...target.options });
      restarted.setControlPlaneUrl(`http://127.0.0.1:${(api.address() as AddressInfo).port}`);
      await restarted.restoreActiveInstances();
      expect((await new InstanceStore(db).live(app.deploymentId)).map((row) => row.id)).toEqual(before);
      expect(await answers(`${app.url}/ok`)).toBe(true);
      // The restarted target now supervises them: a container killed under it is replaced.
      const [victim] = before;
      await test.engine.stopContainer(containerName(victim as string), 0);
      await waitUntil(async () => {
        const live = await new InstanceStore(db).live(app.deploymentId);
        return !live.some((row) => row.id === victim) && live.filter((row) => row.status === 'serving').length === 2;
      });
      const logs = await db('app_logs').where({ deployment_id: app.deploymentId }).pluck('message');
      expect(logs).toEqual(
        expect.arrayContaining([expect.stringMatching(/(exited \(code \d+\)|killed \(SIGKILL\)).*; starting a replacement/)]),
      );
      expect(await answers(`${app.url}/ok`)).toBe(true);
    });

    it('runs a graph for a tenant key after the restart: key checked by the control plane, checkpoint written, over sockets', async () => {
      const run = (apiKey: string) =>
        fetch(`${app.url}/runs/wait`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
          body: JSON.stringify({ assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'ping' }] } }),
        });
      const response = await run(app.apiKey);
      expect(response.status).toBe(200);
      expect(JSON.stringify(await response.json())).toContain('pong');
      expect((await run('lsv2_not_a_key')).status).toBe(401);
    });

    it("the app's output reaches the app logs", async () => {
      await waitUntil(async () =>
        (await db('app_logs').where({ deployment_id: app.deploymentId }).pluck('message')).some((m) =>
          /listening|Serving|8000/i.test(m),
        ),
      );
    });
  });

  // The same doors for an app in either language. A Python app's probes are its graph's node, run in the Python executor
  // the runtime starts (a child of the server in the same container) and asked for through /runs/wait; Node and the
  // executor together idle at ~175 MB (decisions.md, "Python graphs"), hence its larger memory limit.
  describe.each([
    { language: 'javascript' as const, memoryLimitMb: 128 },
    { language: 'python' as const, memoryLimitMb: 512 },
  ])('a hostile tenant app in $language (probes), each attempt denied or contained', ({ language, memoryLimitMb }) => {
    let app: Awaited<ReturnType<typeof deploy>>;
    let other: Awaited<ReturnType<typeof deploy>>;
    type ProbeResult = { reached: boolean; detail: unknown };
    /** One attempt: the probe's result, or null when none came back (its process was killed on the way). */
    const attempt = async (name: string, query: Record<string, string> = {}) => {
      // POST for JavaScript's memory probe: the gateway retries an idempotent request cut by the kill on the
      // replacement, which would die too (a Python probe is a POST /runs/wait anyway).
      const request =
        language === 'javascript'
          ? fetch(`${app.url}/probe/${name}?${new URLSearchParams(query).toString()}`, {
              method: name === 'memory' ? 'POST' : 'GET',
            })
          : fetch(`${app.url}/runs/wait`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': app.apiKey },
              body: JSON.stringify({ assistant_id: 'probes', input: { probe: name, params: query } }),
            });
      const response = await request.catch((error: Error) => ({ status: 0, text: async () => error.message }));
      const body = await response.text();
      if (response.status !== 200) return { status: response.status, body, result: null };
      const parsed = JSON.parse(body) as ProbeResult & { result?: ProbeResult };
      return { status: response.status, body, result: language === 'javascript' ? parsed : (parsed.result ?? null) };
    };
    const probe = async (name: string, query: Record<string, string> = {}) => {
      const answer = await attempt(name, query);
      if (!answer.result) throw new Error(`probe ${name} gave no result: ${answer.status} ${answer.body.slice(0, 500)}`);
      return answer.result;
    };

    beforeAll(async () => {
      const imageRef = await ensureFixtureImage(test, language);
      const options = {
        secrets: language === 'javascript' ? [{ name: 'PROBES', value: '1' }] : [],
        resourceSpec: { memory_limit_mb: memoryLimitMb },
      };
      [app, other] = await Promise.all([deploy(options, imageRef), deploy(options, imageRef)]);
    }, IMAGE_BUILD_HOOK_MS);

    it('cannot read the data dir secret-key and api-key', async () => {
      expect(await probe('secret-files', { dataDir: config.dataDir })).toMatchObject({ reached: false });
    });

    it('sees no other process environment in /proc', async () => {
      const result = await probe('environ');
      expect(result).toMatchObject({ reached: false, detail: { foreign: [], ownHasToken: true } });
    });

    it("cannot reach another deployment's database with its own role, or with the other's role name", async () => {
      const result = await probe('other-database', { database: deploymentDatabaseName(other.deploymentId) });
      expect(result.reached).toBe(false);
      expect(JSON.stringify(result.detail)).toMatch(/may connect only as role/);
    });

    it('cannot reach the control-plane database: not through its socket, not over TCP to the host', async () => {
      const port = new URL(testEnv.databaseUrl()).port || '5432';
      const result = await probe('control-database', { database: process.env.GRAPHX_TEST_DATABASE_NAME as string, port });
      expect(result).toMatchObject({ reached: false });
    });

    it('reaches the control plane only through its socket, and there only the internal API', async () => {
      const port = String((api.address() as AddressInfo).port);
      const result = (await probe('control-plane', { port })) as {
        reached: boolean;
        detail: { direct: unknown[]; publicApi: number };
      };
      expect(result).toMatchObject({ reached: false, detail: { publicApi: 403 } });
      // Its own gateway, the engine's default one and host.containers.internal: none answers.
      expect(result.detail.direct).toEqual([null, null, null]);
    });

    it("cannot reach another deployment's app container by its address: each deployment has its own isolated network", async () => {
      const [otherRow] = await new InstanceStore(db).live(other.deploymentId);
      const networks = (await inspect(otherRow!.id)).NetworkSettings.Networks as Record<string, { IPAddress: string }>;
      expect(Object.keys(networks)).toEqual([deploymentNetworkName(other.deploymentId)]);
      const host = Object.values(networks)[0]!.IPAddress;
      expect(await probe('other-app', { host, port: String(CONTAINER_PORT) })).toEqual({
        reached: false,
        detail: { self: true, other: null },
      });
    });

    it('cannot reach the Temporal frontend', async () => {
      const port = testEnv.temporalAddress().split(':')[1] as string;
      expect(await probe('temporal', { port })).toMatchObject({ reached: false });
    });

    it("cannot reach a host server on 0.0.0.0 (by its network's gateway or the host's address) or the metadata address, yet resolves names", async () => {
      const server = http.createServer((_request, response) => response.end('host service'));
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      try {
        const port = String((server.address() as AddressInfo).port);
        const hostAddress = Object.values(os.networkInterfaces())
          .flat()
          .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address as string;
        // The server does answer on that address: from here, the host itself.
        expect((await fetch(`http://${hostAddress}:${port}/`)).status).toBe(200);
        expect(await probe('host-services', { port, hostAddress, name: 'registry.npmjs.org' })).toEqual({
          reached: false,
          detail: { viaGateway: null, viaHostAddress: null, metadata: null, resolves: true },
        });
      } finally {
        server.close();
      }
    });

    it('cannot write outside /tmp', async () => {
      expect(await probe('write-outside')).toMatchObject({ reached: false, detail: { written: [], tmp: true } });
    });

    it('cannot fork without bound: the pids limit stops it and the app keeps serving', async () => {
      const result = (await probe('fork')) as { reached: boolean; detail: { started: number } };
      expect(result.reached).toBe(false);
      expect(result.detail.started).toBeLessThan(PIDS_LIMIT);
      expect(await answers(`${app.url}/ok`)).toBe(true);
      expect(await probe('write-outside')).toMatchObject({ reached: false });
    });

    it('allocating past memory_limit_mb is an OOM kill, visible in the app logs, and the instance is replaced', async () => {
      const [before] = await new InstanceStore(db).live(app.deploymentId);
      expect((await attempt('memory')).result).toBeNull();
      await waitUntil(async () =>
        (await db('app_logs').where({ deployment_id: app.deploymentId }).pluck('message')).some((m) =>
          m.includes('out of memory'),
        ),
      ).catch(async (error) => {
        const logs = await db('app_logs').where({ deployment_id: app.deploymentId }).pluck('message');
        const live = await new InstanceStore(db).live(app.deploymentId);
        throw new Error(`${(error as Error).message}: ${JSON.stringify({ logs, live })}`);
      });
      await waitUntil(async () => {
        const live = await new InstanceStore(db).live(app.deploymentId);
        return live.length === 1 && live[0]?.id !== before?.id && live[0]?.status === 'serving';
      });
      expect(await answers(`${app.url}/ok`)).toBe(true);
      expect(await probe('write-outside')).toMatchObject({ reached: false });
    });
  });
});
