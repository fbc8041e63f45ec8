/**
 * A control worker's reconcile at start-up (restoreActiveInstances) acts only on the deployments the Kubernetes target
 * rolled out: a deployment of the process or container runner in the same database (one that ran before GRAPHX_RUNNER
 * changed, or a second control plane's) gets no object on the cluster and no token, while one of its own whose
 * object someone deleted gets it back. Real API server, graphx's RBAC-limited account; pods' status simulated.
 */
import type { Db } from '../../../src/db/knex';
import { PipelineState } from '../../../src/db/repositories/pipelineState';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import type { SecretBox } from '../../../src/security/secretBox';
import { KubernetesTarget } from '../../../src/targets/kubernetes/kubernetesTarget';
import { LABELS } from '../../../src/targets/kubernetes/names';
import { MANAGED_KINDS } from '../../../src/targets/kubernetes/objects';
import { loadKubeSettings } from '../../../src/targets/kubernetes/settings';
import { testConfig } from '../../support/env';
import { KUBE_BUILD_TIMEOUT_MS, type TestCluster } from '../../support/kubeCluster';
import { kubeDeployment, startKubeTestbed, type GraphxAccount, type KubeTestbed } from '../../support/kubeFixtures';
import { keepPodsReady } from '../../support/kubePods';
import { createDeployment } from '../activities/pipelineFixtures';

const config = testConfig();
let bed: KubeTestbed;
let cluster: TestCluster;
let account: GraphxAccount;
let namespace: string;
let db: Db;
let secretBox: SecretBox;

beforeAll(async () => {
  bed = await startKubeTestbed(config);
  ({ cluster, account, namespace, db, secretBox } = bed);
}, KUBE_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await bed?.stop();
});

function target(): KubernetesTarget {
  const settings = loadKubeSettings(
    { GRAPHX_KUBE_NAMESPACE: namespace, GRAPHX_KUBE_BASE_DOMAIN: 'apps.test', GRAPHX_KUBE_INGRESS_CLASS: 'nginx' },
    config.databaseUrl,
  );
  return new KubernetesTarget({ config, db, secretBox, settings, api: account.api });
}

const selectorOf = (deploymentId: string) => `${LABELS.deployment}=${deploymentId}`;

/** Every object of the deployment on the cluster, as `Kind/name`. */
async function objectsOf(deploymentId: string): Promise<string[]> {
  const found: string[] = [];
  for (const { apiVersion, kind } of MANAGED_KINDS.filter((managed) => managed.kind !== 'HTTPRoute')) {
    const objects = await cluster.admin.list(apiVersion, kind, namespace, { labelSelector: selectorOf(deploymentId) });
    found.push(...objects.map((object) => `${kind}/${object.metadata.name}`));
  }
  return found.sort();
}

const tokensOf = async (deploymentId: string) =>
  (await db('service_tokens').where({ deployment_id: deploymentId }).orderBy('id').select('id', 'token_hash')) as unknown[];

(process.env.GRAPHX_TEST_KUBE === 'real' ? test.skip : test)(
  'a restart reconciles the deployments rolled out on the cluster and leaves those of other runners untouched (simulated pod status)',
  async () => {
    // Ours: rolled out by the target, then someone deleted its Service.
    const ours = await kubeDeployment(db, secretBox, namespace, { resourceSpec: { min_scale: 1 } });
    const ready = keepPodsReady(cluster.admin, namespace, selectorOf(ours.deploymentId));
    try {
      await target().rollout(await loadRevisionSpec(db, secretBox, ours.revisionId));
    } finally {
      await ready();
    }
    const oursBefore = await objectsOf(ours.deploymentId);
    const service = oursBefore.find((object) => object.startsWith('Service/'))?.split('/')[1] as string;
    await cluster.admin.delete('v1', 'Service', namespace, service);

    // The process runner's: DEPLOYED on this machine, no image. The container runner's: a local image with an id.
    const processRun = await createDeployment(db, secretBox);
    await new PipelineState(db).markRevisionActive(processRun.deploymentId, processRun.revisionId, 'http://127.0.0.1:8080/p');
    const containerRun = await kubeDeployment(db, secretBox, namespace);
    await db('revisions')
      .where({ id: containerRun.revisionId })
      .update({ image_ref: `localhost/graphx-app-${containerRun.revisionId}:latest` });
    await new PipelineState(db).markRevisionActive(containerRun.deploymentId, containerRun.revisionId, 'http://127.0.0.1:8080/c');
    const tokensBefore = [await tokensOf(processRun.deploymentId), await tokensOf(containerRun.deploymentId)];
    const rowsBefore = await db('deployments').whereIn('id', [processRun.deploymentId, containerRun.deploymentId]).orderBy('id');

    const restarted = target();
    await restarted.restoreActiveInstances();

    expect(await objectsOf(ours.deploymentId)).toEqual(oursBefore);
    expect(await objectsOf(containerRun.deploymentId)).toEqual([]);
    expect(await objectsOf(processRun.deploymentId)).toEqual([]);
    expect([await tokensOf(processRun.deploymentId), await tokensOf(containerRun.deploymentId)]).toEqual(tokensBefore);
    expect(await db('deployments').whereIn('id', [processRun.deploymentId, containerRun.deploymentId]).orderBy('id')).toEqual(
      rowsBefore,
    );
  },
);
