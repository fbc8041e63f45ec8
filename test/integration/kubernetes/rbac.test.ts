/**
 * graphx's service account with the shipped Role (deploy/kubernetes/managed-namespace/role.yaml) on a real API
 * server with RBAC (issue 21, acceptance 2): it can do what a rollout needs in the namespaces it manages, and cannot
 * read or write anything outside them, nor grant itself more.
 */
import { KubeApiError } from '../../../src/targets/kubernetes/kubeApi';
import type { KubeObject } from '../../../src/targets/kubernetes/objects/types';
import { createTestNamespace, KUBE_BUILD_TIMEOUT_MS, startTestCluster, type TestCluster } from '../../support/kubeCluster';
import { graphxAccount, type GraphxAccount } from '../../support/kubeFixtures';

let cluster: TestCluster;
let account: GraphxAccount;
let outside: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  account = await graphxAccount(cluster, 2);
  outside = await createTestNamespace(cluster, 'other-team');
  await cluster.admin.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'their-token', namespace: outside },
    type: 'Opaque',
    data: { token: Buffer.from('not yours').toString('base64') },
  });
}, KUBE_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await cluster?.stop();
});

const secret = (namespace: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'probe', namespace },
  type: 'Opaque',
  data: { a: 'Yg==' },
});

const deployment = (namespace: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'probe', namespace },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'probe' } },
    template: { metadata: { labels: { app: 'probe' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});

async function status(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (error) {
    if (error instanceof KubeApiError) return error.status;
    throw error;
  }
}

test('in every managed namespace it rolls out, reads pods, events and logs, and deletes by label', async () => {
  for (const namespace of account.managed) {
    expect(await status(() => account.api.apply(secret(namespace)))).toBe(200);
    expect(await status(() => account.api.apply(deployment(namespace)))).toBe(200);
    expect(await status(() => account.api.list('v1', 'Pod', namespace))).toBe(200);
    expect(await status(() => account.api.list('v1', 'Event', namespace))).toBe(200);
    expect(await status(() => account.api.list('apps/v1', 'ReplicaSet', namespace))).toBe(200);
    expect(await status(() => account.api.deleteCollection('apps/v1', 'Deployment', namespace, 'app=probe'))).toBe(200);
  }
});

test('outside its namespaces it can neither read nor write (403 from the real RBAC)', async () => {
  const refused: Array<[string, () => Promise<unknown>]> = [
    ["read another namespace's secret", () => account.api.get('v1', 'Secret', outside, 'their-token')],
    ["list another namespace's secrets", () => account.api.list('v1', 'Secret', outside)],
    ['list kube-system secrets', () => account.api.list('v1', 'Secret', 'kube-system')],
    ['create a Deployment in another namespace', () => account.api.apply(deployment(outside))],
    ['create a Secret in default', () => account.api.apply(secret('default'))],
    ["read its own namespace's secrets", () => account.api.list('v1', 'Secret', account.home)],
    ['list secrets of all namespaces', () => account.api.list('v1', 'Secret', undefined)],
    ['list namespaces', () => account.api.list('v1', 'Namespace', undefined)],
    ['list nodes', () => account.api.list('v1', 'Node', undefined)],
    [
      'grant itself a Role',
      () =>
        account.api.apply({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'more', namespace: account.managed[0] as string },
          rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
        } as KubeObject),
    ],
    [
      'bind cluster-admin',
      () =>
        account.api.apply({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'graphx-admin' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: 'graphx', namespace: account.home }],
        } as KubeObject),
    ],
    [
      'exec into a pod of a managed namespace',
      () => account.api.request('POST', `/api/v1/namespaces/${account.managed[0]}/pods/any/exec`, { query: { command: 'sh' } }),
    ],
    [
      "write a pod's status (the kubelet's job)",
      () =>
        account.api.request('PATCH', `/api/v1/namespaces/${account.managed[0]}/pods/any/status`, {
          body: { status: {} },
          contentType: 'application/merge-patch+json',
        }),
    ],
  ];
  const results = await Promise.all(refused.map(async ([what, call]) => `${what}: ${await status(call)}`));
  expect(results).toEqual(refused.map(([what]) => `${what}: 403`));
});
