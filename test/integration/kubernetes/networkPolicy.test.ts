/**
 * A tenant's NetworkPolicy (issue 21, acceptance 3), as the real API server stores and defaults it: egress to its own
 * database, the control plane's internal API and DNS only (with public egress off), never to another tenant's pods,
 * the control plane's other pods, the node's or the cloud's private ranges; ingress only from the ingress
 * controller's namespace. No network plugin runs here, so the stored policy's rules are evaluated
 * (test/support/networkPolicyEval.ts); with GRAPHX_TEST_KUBE=real a CNI enforces the same object.
 */
import { revisionObjects, type RevisionObjectsInput } from '../../../src/targets/kubernetes/objects';
import { loadKubeSettings } from '../../../src/targets/kubernetes/settings';
import { createTestNamespace, KUBE_BUILD_TIMEOUT_MS, startTestCluster, type TestCluster } from '../../support/kubeCluster';
import { admits, type Peer } from '../../support/networkPolicyEval';

let cluster: TestCluster;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  namespace = await createTestNamespace(cluster, 'tenants');
}, KUBE_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await cluster?.stop();
});

const base = {
  GRAPHX_KUBE_CONTROL_PLANE_URL: 'http://graphx-api.graphx.svc:8080',
  GRAPHX_KUBE_CONTROL_PLANE_NAMESPACE: 'graphx',
  GRAPHX_KUBE_DATABASE_HOST: '10.20.0.5',
  GRAPHX_KUBE_INGRESS_NAMESPACE: 'ingress-nginx',
};

function input(deploymentId: string): RevisionObjectsInput {
  return {
    deploymentId,
    revisionId: '11111111-2222-4333-8444-555555555555',
    tenantId: '99999999-8888-4777-8666-555555555555',
    deploymentName: 'agent',
    routeKey: 'agent',
    namespace,
    image: `registry.test/app@sha256:${'b'.repeat(64)}`,
    builtImage: true,
    configPath: 'graphx.json',
    resourceSpec: {},
    customUrl: null,
    secrets: [],
    serviceToken: 'gxs_x',
    databasePassword: 'p',
    databaseName: 'gx_x',
  };
}

async function storedPolicy(env: Record<string, string>, deploymentId: string): Promise<any> {
  const settings = loadKubeSettings({ ...base, ...env });
  const policy = revisionObjects(input(deploymentId), settings).find((object) => object.kind === 'NetworkPolicy')!;
  return cluster.admin.apply(policy);
}

const ns = (name: string) => ({ name, labels: { 'kubernetes.io/metadata.name': name } });
const own = 'aaaaaaaa-0000-4000-8000-000000000001';
const other = 'bbbbbbbb-0000-4000-8000-000000000002';

const destinations: Record<string, Peer> = {
  'its own database (shared server)': { ip: '10.20.0.5', port: 5432 },
  "the control plane's internal API": {
    namespace: ns('graphx'),
    podLabels: { 'app.kubernetes.io/name': 'graphx', 'app.kubernetes.io/component': 'api' },
    ip: '10.244.1.10',
    port: 8080,
  },
  'cluster DNS': {
    namespace: ns('kube-system'),
    podLabels: { 'k8s-app': 'kube-dns' },
    ip: '10.244.0.2',
    port: 53,
    protocol: 'UDP',
  },
  "another tenant's app in the same namespace": {
    get namespace() {
      return ns(namespace);
    },
    podLabels: { 'graphx.dev/deployment': other, 'app.kubernetes.io/component': 'api' },
    ip: '10.244.2.7',
    port: 8000,
  },
  "the control plane's Temporal": {
    namespace: ns('graphx'),
    podLabels: { 'app.kubernetes.io/name': 'temporal' },
    ip: '10.244.1.11',
    port: 7233,
  },
  'the shared database on another port': { ip: '10.20.0.5', port: 22 },
  "another host of the database's network": { ip: '10.20.0.6', port: 5432 },
  'the cloud metadata address': { ip: '169.254.169.254', port: 80 },
  "the node's kubelet": { ip: '192.168.1.20', port: 10250 },
  'a public model API': { ip: '203.0.113.10', port: 443 },
};

test('with public egress off, the policy admits exactly its own database, the internal API and DNS', async () => {
  const policy = await storedPolicy({ GRAPHX_KUBE_PUBLIC_EGRESS: '0' }, own);
  const admitted = Object.entries(destinations)
    .filter(([, peer]) => admits(policy, 'egress', peer))
    .map(([name]) => name);
  expect(admitted).toEqual(['its own database (shared server)', "the control plane's internal API", 'cluster DNS']);
});

test('with public egress on (the default), public addresses are added and no private range is', async () => {
  const policy = await storedPolicy({}, own);
  const admitted = Object.entries(destinations)
    .filter(([, peer]) => admits(policy, 'egress', peer))
    .map(([name]) => name);
  expect(admitted).toEqual([
    'its own database (shared server)',
    "the control plane's internal API",
    'cluster DNS',
    'a public model API',
  ]);
});

test("ingress comes from the ingress controller's namespace only, never from another tenant's pods", async () => {
  const policy = await storedPolicy({}, own);
  expect(policy.spec.podSelector).toEqual({ matchLabels: { 'graphx.dev/deployment': own } });
  const controller: Peer = { namespace: ns('ingress-nginx'), podLabels: { app: 'ingress-nginx' }, ip: '10.244.3.3', port: 8000 };
  const neighbour: Peer = { ...destinations["another tenant's app in the same namespace"]!, port: 8000 };
  expect(admits(policy, 'ingress', controller)).toBe(true);
  expect(admits(policy, 'ingress', neighbour)).toBe(false);
  expect(admits(policy, 'ingress', { ...controller, port: 9090 })).toBe(false);
});

test('with an in-cluster database the app reaches its own database pods only', async () => {
  const policy = await storedPolicy({ GRAPHX_KUBE_DATABASE: 'in-cluster', GRAPHX_KUBE_PUBLIC_EGRESS: '0' }, own);
  const database = (deploymentId: string): Peer => ({
    namespace: ns(namespace),
    podLabels: { 'graphx.dev/deployment': deploymentId, 'app.kubernetes.io/component': 'database' },
    ip: '10.244.2.9',
    port: 5432,
  });
  expect(admits(policy, 'egress', database(own))).toBe(true);
  expect(admits(policy, 'egress', database(other))).toBe(false);
  // The database pod admits its own app and nobody else's.
  const app = (deploymentId: string): Peer => ({
    namespace: ns(namespace),
    podLabels: { 'graphx.dev/deployment': deploymentId },
    ip: '10.244.2.10',
    port: 5432,
  });
  expect(admits(policy, 'ingress', app(own))).toBe(true);
  expect(admits(policy, 'ingress', app(other))).toBe(false);
});
