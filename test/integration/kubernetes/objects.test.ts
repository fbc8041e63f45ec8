/**
 * The objects of a revision on a real kube-apiserver (issue 21, acceptance 1): a deployment with every resource_spec
 * field that acts on Kubernetes yields objects the server validates, defaults and admits; each field is read back
 * where it belongs, field by field; a second apply of the same revision changes nothing (same resourceVersion, no
 * managed-fields churn); the privilege policy's refusals would also be refused or neutralised by nothing else.
 */
import crypto from 'node:crypto';
import { revisionObjects, type RevisionObjectsInput } from '../../../src/targets/kubernetes/objects';
import { loadKubeSettings } from '../../../src/targets/kubernetes/settings';
import type { KubeObject } from '../../../src/targets/kubernetes/objects/types';
import { createTestNamespace, KUBE_BUILD_TIMEOUT_MS, startTestCluster, type TestCluster } from '../../support/kubeCluster';

let cluster: TestCluster;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  namespace = await createTestNamespace(cluster, 'objects');
}, KUBE_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await cluster?.admin.delete('v1', 'Namespace', undefined, namespace).catch(() => {});
  await cluster?.stop();
});

const settings = loadKubeSettings({
  GRAPHX_KUBE_NAMESPACE: 'graphx-apps',
  GRAPHX_KUBE_DATABASE: 'in-cluster',
  GRAPHX_KUBE_INGRESS_CLASS: 'nginx',
  GRAPHX_KUBE_TLS_SECRET: 'apps-wildcard',
  GRAPHX_KUBE_BASE_DOMAIN: 'apps.example.com',
  GRAPHX_KUBE_PULL_SECRET: 'graphx-registry',
  GRAPHX_KUBE_STORAGE_CLASS: 'fast',
});

const everyField = {
  min_scale: 2,
  max_scale: 5,
  cpu: 0.5,
  cpu_limit: 1,
  memory_mb: 512,
  memory_limit_mb: 1024,
  queue_min_scale: 1,
  queue_max_scale: 3,
  queue_cpu: 0.25,
  queue_cpu_limit: 0.75,
  queue_memory_mb: 256,
  queue_memory_limit_mb: 768,
  db_cpu: 0.5,
  db_cpu_limit: 2,
  db_memory_mb: 512,
  db_memory_limit_mb: 2048,
  db_storage_gi: 20,
  db_max_connections: 50,
  labels: { team: 'agents' },
  annotations: { 'example.com/owner': 'ml-platform' },
  service_account_name: 'agent-runner',
  image_pull_secrets: [{ name: 'tenant-registry' }],
  volumes: [
    { name: 'agent-config', configMap: { name: 'agent-config' } },
    { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
  ],
  volume_mounts: [{ name: 'agent-config', mountPath: '/etc/agent', readOnly: true }],
  init_containers: [{ name: 'migrate', image: 'busybox:1.36', command: ['sh', '-c', 'true'] }],
  sidecars: [
    { name: 'proxy', image: 'envoyproxy/envoy:v1.31', args: ['--config-path', '/etc/agent/envoy.yaml'] },
    { name: 'log-shipper', image: 'fluent/fluent-bit:3', restartPolicy: 'Always' },
  ],
};

function input(overrides: Partial<RevisionObjectsInput> = {}): RevisionObjectsInput {
  return {
    deploymentId: '7f3c2a10-4b5d-4e6f-8a9b-0c1d2e3f4a5b',
    revisionId: '11111111-2222-4333-8444-555555555555',
    tenantId: '99999999-8888-4777-8666-555555555555',
    deploymentName: 'support-agent',
    routeKey: 'support-agent',
    namespace,
    image: `127.0.0.1:5000/graphx/support-agent@sha256:${'a'.repeat(64)}`,
    builtImage: true,
    configPath: 'graphx.json',
    resourceSpec: everyField,
    customUrl: 'https://agents.example.com',
    secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test-123' }],
    serviceToken: 'gxs_token_for_test',
    databasePassword: 'db-password',
    databaseName: 'gx_7f3c2a104b5d4e6f8a9b0c1d2e3f4a5b',
    ...overrides,
  };
}

async function applyAll(objects: KubeObject[]): Promise<KubeObject[]> {
  const applied: KubeObject[] = [];
  for (const object of objects) applied.push(await cluster.admin.apply(object));
  return applied;
}

function find(objects: KubeObject[], kind: string, name: string): any {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

describe('every resource_spec field on a real API server', () => {
  let live: KubeObject[];
  const api = 'support-agent-7f3c2a104b5d';
  const queue = `${api}-queue`;
  const db = `${api}-db`;
  const container = (deployment: any, name = 'agent-server') =>
    deployment.spec.template.spec.containers.find((c: any) => c.name === name);

  beforeAll(async () => {
    live = await applyAll(revisionObjects(input(), settings));
  });

  const table: Array<[string, (objects: KubeObject[]) => unknown, unknown]> = [
    ['min_scale', (o) => find(o, 'HorizontalPodAutoscaler', api).spec.minReplicas, 2],
    ['max_scale', (o) => find(o, 'HorizontalPodAutoscaler', api).spec.maxReplicas, 5],
    ['cpu', (o) => container(find(o, 'Deployment', api)).resources.requests.cpu, '500m'],
    ['cpu_limit', (o) => container(find(o, 'Deployment', api)).resources.limits.cpu, '1'],
    ['memory_mb', (o) => container(find(o, 'Deployment', api)).resources.requests.memory, '512Mi'],
    ['memory_limit_mb', (o) => container(find(o, 'Deployment', api)).resources.limits.memory, '1Gi'],
    ['queue_min_scale', (o) => find(o, 'HorizontalPodAutoscaler', queue).spec.minReplicas, 1],
    ['queue_max_scale', (o) => find(o, 'HorizontalPodAutoscaler', queue).spec.maxReplicas, 3],
    ['queue_cpu', (o) => container(find(o, 'Deployment', queue)).resources.requests.cpu, '250m'],
    ['queue_cpu_limit', (o) => container(find(o, 'Deployment', queue)).resources.limits.cpu, '750m'],
    ['queue_memory_mb', (o) => container(find(o, 'Deployment', queue)).resources.requests.memory, '256Mi'],
    ['queue_memory_limit_mb', (o) => container(find(o, 'Deployment', queue)).resources.limits.memory, '768Mi'],
    [
      'queue_* (the runtime split: API side and queue side over one database)',
      (o) =>
        [api, queue].map(
          (name) => container(find(o, 'Deployment', name)).env.find((e: any) => e.name === 'GRAPHX_RUNTIME_ROLE').value,
        ),
      ['api', 'queue'],
    ],
    ['db_cpu', (o) => container(find(o, 'StatefulSet', db), 'postgres').resources.requests.cpu, '500m'],
    ['db_cpu_limit', (o) => container(find(o, 'StatefulSet', db), 'postgres').resources.limits.cpu, '2'],
    ['db_memory_mb', (o) => container(find(o, 'StatefulSet', db), 'postgres').resources.requests.memory, '512Mi'],
    ['db_memory_limit_mb', (o) => container(find(o, 'StatefulSet', db), 'postgres').resources.limits.memory, '2Gi'],
    ['db_storage_gi', (o) => find(o, 'StatefulSet', db).spec.volumeClaimTemplates[0].spec.resources.requests.storage, '20Gi'],
    ['db_max_connections', (o) => container(find(o, 'StatefulSet', db), 'postgres').args, ['-c', 'max_connections=50']],
    ['labels (object)', (o) => find(o, 'Deployment', api).metadata.labels.team, 'agents'],
    ['labels (pods)', (o) => find(o, 'Deployment', api).spec.template.metadata.labels.team, 'agents'],
    ['annotations', (o) => find(o, 'Deployment', api).spec.template.metadata.annotations['example.com/owner'], 'ml-platform'],
    ['service_account_name', (o) => find(o, 'Deployment', api).spec.template.spec.serviceAccountName, 'agent-runner'],
    [
      'image_pull_secrets',
      (o) => find(o, 'Deployment', api).spec.template.spec.imagePullSecrets,
      [{ name: 'graphx-registry' }, { name: 'tenant-registry' }],
    ],
    [
      'volumes',
      (o) => find(o, 'Deployment', api).spec.template.spec.volumes.map((v: any) => v.name),
      ['tmp', 'agent-config', 'scratch'],
    ],
    [
      'volume_mounts',
      (o) => container(find(o, 'Deployment', api)).volumeMounts.find((m: any) => m.name === 'agent-config'),
      { name: 'agent-config', mountPath: '/etc/agent', readOnly: true },
    ],
    [
      'init_containers',
      (o) => find(o, 'Deployment', api).spec.template.spec.initContainers.map((c: any) => c.name),
      ['migrate', 'log-shipper'],
    ],
    ['sidecars (plain)', (o) => container(find(o, 'Deployment', api), 'proxy').args, ['--config-path', '/etc/agent/envoy.yaml']],
    [
      'sidecars (native, restartPolicy Always)',
      (o) =>
        find(o, 'Deployment', api).spec.template.spec.initContainers.find((c: any) => c.name === 'log-shipper').restartPolicy,
      'Always',
    ],
    ['listener_config.k8s_namespace', (o) => o.every((object) => object.metadata.namespace === namespace), true],
    ['custom_url', (o) => find(o, 'Ingress', api).spec.rules[0].host, 'agents.example.com'],
  ];

  test.each(table)('%s is visible where it belongs', (_field, read, expected) => {
    expect(read(live)).toEqual(expected);
  });

  test('the app container is hardened and probed on /ok; its secrets are a Secret, not the pod spec', () => {
    const deployment = find(live, 'Deployment', api);
    const app = container(deployment);
    expect(app.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(deployment.spec.template.spec.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(app.readinessProbe.httpGet).toMatchObject({ path: '/ok', port: 'http' });
    expect(app.livenessProbe.httpGet.path).toBe('/ok');
    expect(JSON.stringify(deployment)).not.toContain('sk-test-123');
    expect(JSON.stringify(deployment)).not.toContain('db-password');
    const secret = find(live, 'Secret', app.envFrom[0].secretRef.name);
    expect(Buffer.from(secret.data.OPENAI_API_KEY, 'base64').toString()).toBe('sk-test-123');
    expect(Buffer.from(secret.data.DATABASE_URI, 'base64').toString()).toBe(
      `postgresql://gx_7f3c2a104b5d4e6f8a9b0c1d2e3f4a5b:db-password@${db}.${namespace}.svc:5432/gx_7f3c2a104b5d4e6f8a9b0c1d2e3f4a5b`,
    );
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: '25%' });
    // An autoscaler owns replicas: graphx leaves them out of what it applies.
    expect(
      deployment.metadata.managedFields.find((f: any) => f.manager === 'graphx').fieldsV1['f:spec']['f:replicas'],
    ).toBeUndefined();
  });

  test('every object carries the managed-by, deployment and revision labels', () => {
    for (const object of live) {
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/managed-by': 'graphx',
        'graphx.dev/deployment': '7f3c2a10-4b5d-4e6f-8a9b-0c1d2e3f4a5b',
        'graphx.dev/revision': '11111111-2222-4333-8444-555555555555',
      });
    }
  });

  test('a second apply of the same revision changes nothing (same generation, graphx owns the same fields)', async () => {
    // Controllers write status (and the autoscaler replicas) in between: compare what an apply could change.
    const current = await Promise.all(
      live.map((o) => cluster.admin.get(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name)),
    );
    const owned = (object: KubeObject | null) => ({
      kind: object?.kind,
      name: object?.metadata.name,
      generation: object?.metadata.generation ?? null,
      version: object?.metadata.generation === undefined ? object?.metadata.resourceVersion : null,
      graphx: (object?.metadata.managedFields as any[]).filter((entry) => entry.manager === 'graphx'),
    });
    const again = await applyAll(revisionObjects(input(), settings));
    expect(again.map(owned)).toEqual(current.map((object, index) => ({ ...owned(object), kind: live[index]?.kind })));
  });

  test('without an autoscaler graphx owns replicas = min_scale', async () => {
    const fixed = input({
      deploymentId: crypto.randomUUID(),
      resourceSpec: { min_scale: 3 },
      customUrl: null,
    });
    const applied = await applyAll(revisionObjects(fixed, settings));
    const deployment = applied.find((object) => object.kind === 'Deployment') as any;
    expect(deployment.spec.replicas).toBe(3);
    expect(applied.some((object) => object.kind === 'HorizontalPodAutoscaler')).toBe(false);
    expect((applied.find((object) => object.kind === 'Ingress') as any).spec.rules[0].host).toBe(
      'support-agent.apps.example.com',
    );
  });
});
