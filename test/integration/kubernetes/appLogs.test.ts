/**
 * App logs on Kubernetes come from the pods (issue 21, point 2): `GET /v2/deployments/:id/logs` of a control plane
 * with GRAPHX_RUNNER=kubernetes (the stack's own composition root, the API alone as the manifests run it) reads what
 * the deployment's containers printed through the real API server, which proxies `pods/<pod>/log` to the node's
 * kubelet. No kubelet runs here: the test cluster's node is served by a simulated kubelet (test/support/kubeCluster.ts,
 * `GET /containerLogs/...` only), and pods get their status and node from the test; the names say so.
 */
import type { Db } from '../../../src/db/knex';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import type { SecretBox } from '../../../src/security/secretBox';
import { KubernetesTarget } from '../../../src/targets/kubernetes/kubernetesTarget';
import { LABELS } from '../../../src/targets/kubernetes/names';
import { loadKubeSettings } from '../../../src/targets/kubernetes/settings';
import { findFreePort } from '@graphx/kit/net/ports';
import { testConfig } from '../../support/env';
import { KUBE_BUILD_TIMEOUT_MS, SIMULATED_NODE, type TestCluster } from '../../support/kubeCluster';
import { kubeDeployment, startKubeTestbed, type GraphxAccount, type KubeTestbed } from '../../support/kubeFixtures';
import { keepPodsReady, waitForPods } from '../../support/kubePods';
import { startPipelineStack, type PipelineStack } from '../../support/pipelineStack';

const SILENT_NODE = 'graphx-sim-node-silent';

let bed: KubeTestbed;
let cluster: TestCluster;
let account: GraphxAccount;
let namespace: string;
let db: Db;
let secretBox: SecretBox;
let pipeline: PipelineStack;
const config = testConfig();
const describeLocal = process.env.GRAPHX_TEST_KUBE === 'real' ? describe.skip : describe;

describeLocal('app logs on Kubernetes (simulated kubelet, simulated pod status)', () => {
  beforeAll(async () => {
    bed = await startKubeTestbed(config);
    ({ cluster, account, namespace, db, secretBox } = bed);
    // A node whose kubelet never answers: its address is this machine, its port one nothing listens on.
    await cluster.admin.apply({ apiVersion: 'v1', kind: 'Node', metadata: { name: SILENT_NODE } } as never);
    await cluster.admin.request('PATCH', `/api/v1/nodes/${SILENT_NODE}/status`, {
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: await findFreePort() } },
        },
      },
    });
    pipeline = await startPipelineStack({
      worker: false,
      env: {
        GRAPHX_RUNNER: 'kubernetes',
        KUBECONFIG: account.kubeconfig,
        GRAPHX_KUBE_NAMESPACE: namespace,
        GRAPHX_KUBE_BASE_DOMAIN: 'apps.test',
        GRAPHX_KUBE_INGRESS_CLASS: 'nginx',
      },
    });
  }, KUBE_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await pipeline?.stop();
    await bed?.stop();
  });

  /** A deployment of the stack's tenant rolled out with `replicas` pods, each bound to a node; returns the pod names. */
  async function runningDeployment(replicas: number): Promise<{ deploymentId: string; pods: string[] }> {
    const { deploymentId, revisionId } = await kubeDeployment(db, secretBox, namespace, {
      resourceSpec: { min_scale: replicas },
    });
    await db('deployments').where({ id: deploymentId }).update({ tenant_id: pipeline.tenantId });
    await db('tracing_projects').where({ deployment_id: deploymentId }).update({ tenant_id: pipeline.tenantId });
    const settings = loadKubeSettings(
      { GRAPHX_KUBE_NAMESPACE: namespace, GRAPHX_KUBE_BASE_DOMAIN: 'apps.test', GRAPHX_KUBE_INGRESS_CLASS: 'nginx' },
      config.databaseUrl,
    );
    const target = new KubernetesTarget({ config, db, secretBox, settings, api: account.api });
    const selector = `${LABELS.deployment}=${deploymentId}`;
    const ready = keepPodsReady(cluster.admin, namespace, selector);
    try {
      await target.rollout(await loadRevisionSpec(db, secretBox, revisionId));
    } finally {
      await ready();
    }
    const pods = (await waitForPods(cluster.admin, namespace, selector, replicas)).map((pod) => pod.metadata.name as string);
    return { deploymentId, pods: pods.sort() };
  }

  const bind = (pod: string, node: string) =>
    cluster.admin.request('POST', `/api/v1/namespaces/${namespace}/pods/${pod}/binding`, {
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: pod },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      },
    });
  const printed = (pod: string, lines: string[]) => cluster.kubeletLogs.set(`${namespace}/${pod}/agent-server`, lines);
  const appLogs = (deploymentId: string, query = '') => pipeline.api('GET', `/v2/deployments/${deploymentId}/logs${query}`);

  it("returns the lines the deployment's pods printed, merged by time and paged as on the other runners", async () => {
    const { deploymentId, pods } = await runningDeployment(2);
    const [first, second] = pods as [string, string];
    for (const pod of pods) await bind(pod, SIMULATED_NODE);
    printed(first, ['2026-11-24T10:00:00.5Z runtime serving on 8000', '2026-11-24T10:00:03.000000001Z POST /runs/wait 200']);
    printed(second, ['2026-11-24T10:00:01Z runtime serving on 8000 (second)', '2026-11-24T10:00:02.25Z GET /ok 200']);

    const all = await appLogs(deploymentId);
    expect(all.status).toBe(200);
    expect(all.body.logs.map((line: { message: string }) => line.message)).toEqual([
      'runtime serving on 8000',
      'runtime serving on 8000 (second)',
      'GET /ok 200',
      'POST /runs/wait 200',
    ]);
    expect(all.body.logs[0]).toEqual({
      id: expect.any(String),
      timestamp: '2026-11-24T10:00:00.500Z',
      level: 'info',
      message: 'runtime serving on 8000',
    });
    const ids = all.body.logs.map((line: { id: string }) => line.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
    expect(all.body.next_offset).toBeNull();

    const newest = await appLogs(deploymentId, '?order=desc&limit=3');
    expect(newest.body.logs.map((line: { message: string }) => line.message)).toEqual([
      'POST /runs/wait 200',
      'GET /ok 200',
      'runtime serving on 8000 (second)',
    ]);
    expect(newest.body.next_offset).toBe(3);
    const rest = await appLogs(deploymentId, '?order=desc&limit=3&offset=3');
    expect(rest.body).toEqual({ logs: [all.body.logs[0]], next_offset: null });
    const secondPage = await appLogs(deploymentId, '?limit=2&offset=2');
    expect(secondPage.body).toEqual({ logs: all.body.logs.slice(2), next_offset: 4 });
  });

  it('lines the kubelet stamped with one time keep their order, ids increasing, newest first reversed', async () => {
    const { deploymentId, pods } = await runningDeployment(1);
    await bind(pods[0] as string, SIMULATED_NODE);
    const burst = Array.from({ length: 12 }, (_, index) => `traceback line ${index}`);
    printed(
      pods[0] as string,
      burst.map((text) => `2026-11-24T12:00:00.000000042Z ${text}`),
    );

    const oldest = await appLogs(deploymentId);
    expect(oldest.body.logs.map((line: { message: string }) => line.message)).toEqual(burst);
    const ids = oldest.body.logs.map((line: { id: string }) => line.id);
    expect(new Set(ids).size).toBe(12);
    expect([...ids].sort()).toEqual(ids);
    const newest = await appLogs(deploymentId, '?order=desc&limit=5');
    expect(newest.body.logs).toEqual(oldest.body.logs.slice(-5).reverse());
  });

  it('a pod its kubelet no longer knows, or whose node does not answer, is named in an error line, not a 5xx', async () => {
    const { deploymentId, pods } = await runningDeployment(3);
    const [speaking, forgotten, unreachable] = pods as [string, string, string];
    await bind(speaking, SIMULATED_NODE);
    await bind(forgotten, SIMULATED_NODE); // The kubelet has no log for it: gone from its node.
    await bind(unreachable, SILENT_NODE);
    printed(speaking, ['2026-11-24T11:00:00Z still here']);

    const response = await appLogs(deploymentId);
    expect(response.status).toBe(200);
    const lines = response.body.logs as Array<{ level: string; message: string }>;
    expect(lines[0]).toMatchObject({ level: 'info', message: 'still here' });
    const errors = lines.filter((line) => line.level === 'error').map((line) => line.message);
    expect(errors).toHaveLength(2);
    expect(errors.find((message) => message.includes(forgotten))).toBe(
      `graphx: pod ${forgotten} is gone; its output went with it.`,
    );
    expect(errors.find((message) => message.includes(unreachable))).toMatch(
      new RegExp(`^graphx: the output of pod ${unreachable} could not be read: its node did not answer \\(HTTP 5\\d\\d\\)\\.$`),
    );
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
  });

  it("another tenant's deployment is a 404 with a detail, as on the other runners", async () => {
    const { deploymentId } = await kubeDeployment(db, secretBox, namespace);
    const response = await appLogs(deploymentId);
    expect(response.status).toBe(404);
    expect(response.body.detail).toBe(`Deployment ID ${deploymentId} not found.`);
  });
});
