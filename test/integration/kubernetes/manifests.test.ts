/**
 * graphx's own manifests (deploy/kubernetes, issue 21 point 3) are objects the real API server accepts (server-side
 * dry run of every document), and the API and worker are ready only on /ready.
 */
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { objectPath } from '../../../src/targets/kubernetes/kubeApi';
import type { KubeObject } from '../../../src/targets/kubernetes/objects/types';
import { createTestNamespace, KUBE_BUILD_TIMEOUT_MS, startTestCluster, type TestCluster } from '../../support/kubeCluster';

const DEPLOY = path.resolve(__dirname, '..', '..', '..', 'deploy', 'kubernetes');
let cluster: TestCluster;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  namespace = await createTestNamespace(cluster, 'graphx');
}, KUBE_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await cluster?.stop();
});

function documents(dir: string): KubeObject[] {
  return fs
    .readdirSync(path.join(DEPLOY, dir))
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) => yaml.loadAll(fs.readFileSync(path.join(DEPLOY, dir, file), 'utf8')) as KubeObject[]);
}

test('every manifest of the base and the managed-namespace Role passes the API server (dry run)', async () => {
  const objects = [...documents('base'), ...documents('managed-namespace')];
  expect(objects.map((object) => object.kind).sort()).toEqual(
    ['ConfigMap', 'Deployment', 'Deployment', 'Role', 'RoleBinding', 'Service', 'ServiceAccount'].sort(),
  );
  for (const object of objects) {
    object.metadata.namespace = namespace;
    const template = (object as any).spec?.template?.spec;
    for (const container of template?.containers ?? []) container.image = 'registry.example.com/graphx/graphx-platform:0.1.0';
    await cluster.admin.request('PATCH', objectPath(object), {
      query: { fieldManager: 'graphx-manifests-test', force: true, dryRun: 'All' },
      body: object,
      contentType: 'application/apply-patch+yaml',
    });
  }
  const deployments = objects.filter((object) => object.kind === 'Deployment') as any[];
  for (const deployment of deployments) {
    const container = deployment.spec.template.spec.containers[0];
    expect(`${deployment.metadata.name}: ${container.readinessProbe.httpGet.path}`).toBe(`${deployment.metadata.name}: /ready`);
    expect(deployment.spec.template.spec.serviceAccountName).toBe('graphx');
  }
});
