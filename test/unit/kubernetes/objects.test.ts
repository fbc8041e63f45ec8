/**
 * The parts of the object builders the test API server cannot show (it serves no Gateway API): the HTTPRoute for a
 * deployment URL, the URL itself per route kind, and resource_spec numbers as canonical quantities.
 */
import { deploymentUrl, revisionObjects, type RevisionObjectsInput } from '../../../src/targets/kubernetes/objects';
import { cpuQuantity, memoryQuantity, storageQuantity } from '../../../src/targets/kubernetes/objects/quantities';
import { loadKubeSettings } from '../../../src/targets/kubernetes/settings';

const input: RevisionObjectsInput = {
  deploymentId: '7f3c2a10-4b5d-4e6f-8a9b-0c1d2e3f4a5b',
  revisionId: '11111111-2222-4333-8444-555555555555',
  tenantId: '99999999-8888-4777-8666-555555555555',
  deploymentName: 'support-agent',
  routeKey: 'support-agent',
  namespace: 'team-a',
  image: `registry.test/app@sha256:${'c'.repeat(64)}`,
  builtImage: false,
  configPath: 'graphx.json',
  resourceSpec: {},
  customUrl: null,
  secrets: [],
  serviceToken: 't',
  databasePassword: 'p',
  databaseName: 'gx_x',
};

test('with GRAPHX_KUBE_ROUTE=httproute the deployment URL is an HTTPRoute on the configured Gateway', () => {
  const settings = loadKubeSettings({
    GRAPHX_KUBE_ROUTE: 'httproute',
    GRAPHX_KUBE_GATEWAY: 'gateways/public',
    GRAPHX_KUBE_BASE_DOMAIN: 'apps.example.com',
  });
  const route = revisionObjects(input, settings).find((object) => object.kind === 'HTTPRoute') as any;
  expect(route.apiVersion).toBe('gateway.networking.k8s.io/v1');
  expect(route.spec).toEqual({
    parentRefs: [{ name: 'public', namespace: 'gateways' }],
    hostnames: ['support-agent.apps.example.com'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [{ name: 'support-agent-7f3c2a104b5d', port: 80 }],
      },
    ],
  });
  expect(revisionObjects(input, settings).some((object) => object.kind === 'Ingress')).toBe(false);
  expect(deploymentUrl({ ...input, customUrl: 'https://agents.example.org/x' }, settings)).toBe('https://agents.example.org');
});

test('with GRAPHX_KUBE_ROUTE=none no route is made and the URL is the Service inside the cluster', () => {
  const settings = loadKubeSettings({ GRAPHX_KUBE_ROUTE: 'none' });
  expect(revisionObjects(input, settings).map((object) => object.kind)).toEqual([
    'Secret',
    'NetworkPolicy',
    'Deployment',
    'Service',
  ]);
  expect(deploymentUrl(input, settings)).toBe('http://support-agent-7f3c2a104b5d.team-a.svc');
});

test('an HTTPRoute needs its Gateway named', () => {
  expect(() => loadKubeSettings({ GRAPHX_KUBE_ROUTE: 'httproute' })).toThrow(/GRAPHX_KUBE_GATEWAY/);
});

test.each([
  [cpuQuantity(0.5), '500m'],
  [cpuQuantity(2), '2'],
  [cpuQuantity(1.25), '1250m'],
  [memoryQuantity(512), '512Mi'],
  [memoryQuantity(2048), '2Gi'],
  [storageQuantity(20), '20Gi'],
  [storageQuantity(2048), '2Ti'],
])('quantity %s is %s', (actual, expected) => {
  expect(actual).toBe(expected);
});

test('without queue_* fields one Deployment does everything; with them the API side leaves background runs to the queue side', () => {
  const settings = loadKubeSettings({});
  const roles = (resourceSpec: RevisionObjectsInput['resourceSpec']) =>
    revisionObjects({ ...input, resourceSpec }, settings)
      .filter((object) => object.kind === 'Deployment')
      .map((object) => {
        const container = (object.spec as any).template.spec.containers[0];
        return `${object.metadata.name}: ${container.env.find((e: any) => e.name === 'GRAPHX_RUNTIME_ROLE').value}`;
      });
  expect(roles({})).toEqual(['support-agent-7f3c2a104b5d: all']);
  expect(roles({ queue_min_scale: 2 })).toEqual(['support-agent-7f3c2a104b5d: api', 'support-agent-7f3c2a104b5d-queue: queue']);
});
