/**
 * resource_spec policy (issue 21, point 4; CONTRACT §9): privileges are a 422 on every runner; on Kubernetes a field
 * without effect is a 422 naming it; on the process and container runners each such field is a named warning.
 */
import { ValidationError } from '@graphx/kit/errors';
import { checkResourceSpec, type RunnerPolicy } from '../../../src/deployments/resourceSpecPolicy';
import type { ResourceSpec } from '../../../src/pipeline/resourceSpec';

const kubernetes: RunnerPolicy = {
  runner: 'kubernetes',
  kubernetes: {
    inClusterDatabase: false,
    queueRole: false,
    managedNamespaces: ['graphx-apps', 'team-a'],
    selfServiceAccount: 'graphx',
  },
};

function refusal(resourceSpec: ResourceSpec, policy: RunnerPolicy = kubernetes, extra: Record<string, unknown> = {}) {
  try {
    checkResourceSpec({ resource_spec: resourceSpec as Record<string, unknown>, ...extra }, policy);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
  return null;
}

describe('a resource_spec asking for privileges is refused with a 422 naming the field, on every runner', () => {
  const cases: Array<[string, ResourceSpec, Array<string | number>]> = [
    [
      'a sidecar asking for privileged mode',
      { sidecars: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }] },
      ['sidecars', 0, 'securityContext', 'privileged'],
    ],
    [
      'a sidecar mounting a host path through its own volume',
      {
        volumes: [{ name: 'host', hostPath: { path: '/' } }],
        sidecars: [{ name: 's', volumeMounts: [{ name: 'host', mountPath: '/host' }] }],
      },
      ['volumes', 0, 'hostPath'],
    ],
    [
      'a volumes entry naming a hostPath',
      { volumes: [{ name: 'docker', hostPath: { path: '/var/run/docker.sock' } }] },
      ['volumes', 0, 'hostPath'],
    ],
    [
      "an init container mounting another namespace's service-account token",
      {
        volumes: [{ name: 'stolen', projected: { sources: [{ secret: { name: 'graphx-token', namespace: 'graphx' } }] } }],
        init_containers: [
          {
            name: 'steal',
            image: 'busybox',
            volumeMounts: [{ name: 'stolen', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
          },
        ],
      },
      ['volumes', 0, 'projected', 'sources', 0, 'secret', 'namespace'],
    ],
    [
      "an init container replacing the pod's token directory",
      {
        init_containers: [
          {
            name: 'swap',
            image: 'busybox',
            volumeMounts: [{ name: 'x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount/' }],
          },
        ],
      },
      ['init_containers', 0, 'volumeMounts', 0, 'mountPath'],
    ],
    [
      'a secret named as <namespace>/<name>',
      { volumes: [{ name: 's', secret: { secretName: 'kube-system/admin-token' } }] },
      ['volumes', 0, 'secret', 'secretName'],
    ],
    [
      "another namespace's service account",
      { service_account_name: 'system:serviceaccount:kube-system:admin' },
      ['service_account_name'],
    ],
    ["graphx's own service account", { service_account_name: 'graphx' }, ['service_account_name']],
    [
      'added capabilities',
      { sidecars: [{ name: 'net', securityContext: { capabilities: { add: ['NET_ADMIN'] } } }] },
      ['sidecars', 0, 'securityContext', 'capabilities', 'add'],
    ],
    [
      'a container running as root',
      { init_containers: [{ name: 'root', securityContext: { runAsUser: 0 } }] },
      ['init_containers', 0, 'securityContext', 'runAsUser'],
    ],
    [
      'privilege escalation',
      { sidecars: [{ name: 'esc', securityContext: { allowPrivilegeEscalation: true } }] },
      ['sidecars', 0, 'securityContext', 'allowPrivilegeEscalation'],
    ],
    ['a host port', { sidecars: [{ name: 'hp', ports: [{ containerPort: 80, hostPort: 80 }] }] }, ['sidecars', 0, 'ports', 0]],
    [
      'host networking (not a container field graphx accepts)',
      { sidecars: [{ name: 'hn', hostNetwork: true }] },
      ['sidecars', 0, 'hostNetwork'],
    ],
    [
      'bidirectional mount propagation',
      { volume_mounts: [{ name: 'v', mountPath: '/v', mountPropagation: 'Bidirectional' }] },
      ['volume_mounts', 0, 'mountPropagation'],
    ],
  ];
  for (const runner of ['kubernetes', 'container', 'process'] as const) {
    test.each(cases)(`${runner}: %s`, (_what, spec, path) => {
      const policy = runner === 'kubernetes' ? kubernetes : { runner };
      const issues = refusal(spec, policy);
      expect(issues).not.toBeNull();
      expect(issues?.map((issue) => issue.loc)).toContainEqual(['body', 'source_config', 'resource_spec', ...path]);
      expect(issues?.every((issue) => issue.msg.length > 10)).toBe(true);
    });
  }
});

test('on Kubernetes a field without effect is a 422 naming it; a spec of fields with effect passes', () => {
  expect(
    refusal({ min_scale: 2, max_scale: 4, cpu: 0.5, labels: { a: 'b' }, volumes: [{ name: 'c', configMap: { name: 'x' } }] }),
  ).toBeNull();
  const issues = refusal({
    orchestrator_cpu: 1,
    executor_memory_mb: 512,
    redis_memory_mb: 256,
    db_storage_gi: 10,
    queue_min_scale: 1,
  });
  expect(issues?.map((issue) => issue.loc.at(-1)).sort()).toEqual(
    ['db_storage_gi', 'executor_memory_mb', 'orchestrator_cpu', 'queue_min_scale', 'redis_memory_mb'].sort(),
  );
  expect(issues?.find((issue) => issue.loc.at(-1) === 'db_storage_gi')?.msg).toMatch(/GRAPHX_KUBE_DATABASE=in-cluster/);
  // With an in-cluster database the db_* fields act.
  const inCluster = { ...kubernetes, kubernetes: { ...kubernetes.kubernetes!, inClusterDatabase: true } };
  expect(refusal({ db_storage_gi: 10, db_max_connections: 50, db_cpu: 1 }, inCluster)).toBeNull();
});

test('on Kubernetes a k8s_namespace graphx does not manage is a 422', () => {
  const issues = refusal({}, kubernetes, { listener_config: { k8s_namespace: 'kube-system' } });
  expect(issues?.[0]?.loc).toEqual(['body', 'source_config', 'listener_config', 'k8s_namespace']);
  expect(refusal({}, kubernetes, { listener_config: { k8s_namespace: 'team-a' } })).toBeNull();
});

test('the process and container runners name each field without effect in a warning', () => {
  const spec = {
    min_scale: 2,
    max_scale: 4,
    cpu: 1,
    memory_limit_mb: 512,
    labels: { a: 'b' },
    sidecars: [{ name: 's', image: 'x' }],
  };
  const container = checkResourceSpec({ resource_spec: spec, listener_config: { k8s_namespace: 'x' } }, { runner: 'container' });
  expect(container).toEqual([
    expect.stringMatching(/^resource_spec\.max_scale has no effect: the container runner/),
    expect.stringMatching(/^resource_spec\.labels has no effect/),
    expect.stringMatching(/^resource_spec\.sidecars has no effect/),
    expect.stringMatching(/^listener_config\.k8s_namespace has no effect/),
  ]);
  const process = checkResourceSpec({ resource_spec: spec }, { runner: 'process' });
  expect(process.map((line) => line.split(' ')[0])).toEqual([
    'resource_spec.max_scale',
    'resource_spec.cpu',
    'resource_spec.labels',
    'resource_spec.sidecars',
  ]);
  expect(checkResourceSpec({ resource_spec: { min_scale: 3 } }, { runner: 'process' })).toEqual([]);
});
