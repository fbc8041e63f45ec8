/**
 * A hostile tenant's Python build (issue 20, point 7, the build's side), on real podman through the real pipeline
 * activities: a local package described by a `setup.py` (code pip runs while installing the app's dependencies, the
 * one build step with network) tries the doors the JavaScript install's lifecycle script tries. Each attempt's result
 * is written into the image and printed by the build command, then asserted from the build log, one door per test.
 */
import type { ImageBuilder } from '../../../src/builders/image/imageBuilder';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../../../activities';
import { DEFAULT_BUILD_LIMITS, RevisionImages } from '../../../src/containers/revisionImages';
import { describeWithEngine, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { testEnv } from '../../support/env';
import { createGitRepo } from '../../support/gitRepos';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';
import { activityEnv, createDeployment, createTestDeps, withImageBuilder, type TestDeps } from '../activities/pipelineFixtures';

jest.setTimeout(600_000);

/** In the worker's own environment, as a control-plane secret would be: no build may see it. */
const MARKER = `graphx-hostile-python-marker-${crypto.randomBytes(6).toString('hex')}`;
const RESULTS = '/home/graphx/setup-py-probes.json';

/** setup.py: the probes, run by pip when it builds the package; results kept in the layer for the build command. */
function setupPy(targets: unknown, nonce: string): string {
  return `# nonce ${nonce}
import glob, http.client, json, os, socket
from setuptools import setup

targets = json.loads(${JSON.stringify(JSON.stringify(targets))})

def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=1.5).close()
        return f"{host}:{port}"
    except OSError:
        return None

def via_proxy(target):
    try:
        connection = http.client.HTTPConnection("127.0.0.1", 3128, timeout=5)
        connection.request("CONNECT", target)
        return target if connection.getresponse().status == 200 else None
    except OSError:
        return None

def readable(file):
    try:
        open(file, "rb").read()
        return True
    except OSError:
        return False

environ_hits = []
for file in glob.glob("/proc/[0-9]*/environ"):
    try:
        if targets["marker"].encode() in open(file, "rb").read():
            environ_hits.append(file)
    except OSError:
        pass
results = {
    "registry": {"reached": via_proxy("pypi.org:443") is not None},
    "egress": [hit for hit in [*(tcp(t["host"], t["port"]) for t in targets["direct"]), *map(via_proxy, targets["proxied"])] if hit],
    "secret_files": [file for file in targets["secretFiles"] if readable(file)],
    "environ": environ_hits,
}
with open(${JSON.stringify(RESULTS)}, "w") as out:
    json.dump(results, out)
setup(name="probe", version="0.0.1", py_modules=[])
`;
}

describeWithEngine('a hostile tenant Python build (real podman): setup.py in the dependency install', () => {
  let test: TestEngine;
  let deps: TestDeps & { builder: ImageBuilder };
  let hostServer: http.Server;
  let results: { registry: { reached: boolean }; egress: string[]; secret_files: string[]; environ: string[] };
  let outcome: Error | null = null;
  let log = '';
  const images: string[] = [];

  beforeAll(async () => {
    process.env.GRAPHX_HOSTILE_PYTHON_MARKER = MARKER;
    test = await startTestEngine();
    const runtime = await ensureTestRuntimeImage(test.engine);
    deps = withImageBuilder(
      createTestDeps({ GRAPHX_BUILD_TIMEOUT_SECONDS: '400' }),
      new RevisionImages(test.engine, runtime.ref, DEFAULT_BUILD_LIMITS),
    );
    const secretFiles = ['secret-key', 'api-key'].map((name) => path.join(deps.config.dataDir, name));
    for (const file of secretFiles) fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
    hostServer = http.createServer((_request, response) => response.end('host'));
    await new Promise<void>((resolve) => hostServer.listen(0, '0.0.0.0', resolve));
    const hostPort = (hostServer.address() as AddressInfo).port;
    const ports = [
      Number(new URL(testEnv.databaseUrl()).port || 5432),
      Number(testEnv.temporalAddress().split(':').at(-1)),
      hostPort,
    ];
    const hosts = ['127.0.0.1', '10.88.0.1', 'host.containers.internal', ...hostAddresses()];
    const targets = {
      marker: MARKER,
      secretFiles,
      direct: [
        ...hosts.flatMap((host) => ports.map((port) => ({ host, port }))),
        { host: 'pypi.org', port: 443 },
        { host: '169.254.169.254', port: 80 },
      ],
      proxied: [`10.88.0.1:${hostPort}`, `127.0.0.1:${ports[0]}`, 'example.com:443', 'pypi.org:80', '169.254.169.254:443'],
    };
    const repo = createGitRepo(null);
    repo.commit('a Python app whose local package probes', {
      'graphx.json': JSON.stringify({ graphs: { agent: './graph.py:graph' }, dependencies: ['./probe'] }),
      'graph.py': 'graph = None\n',
      'probe/setup.py': setupPy(targets, crypto.randomBytes(6).toString('hex')),
    });
    const deployment = await createDeployment(deps.db, deps.secretBox, {
      repoUrl: repo.url,
      buildCommand: `echo "PROBES $(cat ${RESULTS})"`,
    });
    const activities = createActivities(deps);
    await activityEnv().run(activities.cloneRepository, deployment);
    outcome = await activityEnv()
      .run(activities.buildApplication, deployment)
      .then(
        () => null,
        (error: Error) => error,
      );
    log = (
      (await deps.db('revision_logs').where({ revision_id: deployment.revisionId }).orderBy('id').pluck('message')) as string[]
    ).join('\n');
    const line = log.split('\n').find((entry) => entry.startsWith('PROBES '));
    if (line) results = JSON.parse(line.slice('PROBES '.length));
    images.push(RevisionImages.tagFor(deployment.deploymentId, deployment.revisionId));
  }, IMAGE_BUILD_HOOK_MS);

  afterAll(async () => {
    delete process.env.GRAPHX_HOSTILE_PYTHON_MARKER;
    for (const ref of images) await test?.engine.removeImage(ref).catch(() => undefined);
    hostServer?.closeAllConnections();
    await new Promise((resolve) => hostServer?.close(resolve));
    await deps?.close();
  });

  it('the build completes and setup.py reported every probe', () => {
    expect(outcome).toBeNull();
    expect(results).toBeDefined();
  });

  it('reaches the Python package index through the build proxy', () => {
    expect(results.registry).toEqual({ reached: true });
  });

  it('reaches nothing else: no host service, database or Temporal, no metadata address, directly or through the proxy', () => {
    expect(results.egress).toEqual([]);
  });

  it("cannot read the control plane data dir's secret-key and api-key", () => {
    expect(results.secret_files).toEqual([]);
  });

  it('sees no control-plane variable in any process environment', () => {
    expect(results.environ).toEqual([]);
  });
});

/** This machine's own IPv4 addresses (its interfaces and the engine's bridge, once one exists). */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((address) => address !== undefined && address.family === 'IPv4' && !address.internal)
    .map((address) => address!.address);
}
