/**
 * The Kubernetes target on a real API server and controller manager, acting as graphx's RBAC-limited service
 * account (issue 21, points 1-2 and acceptance 1): rollouts watched through the Deployment's status, failures named
 * with Kubernetes' reason, the old ReplicaSet serving until the new one is available, rollback by redeploy, delete,
 * and a second worker resuming a rollout. No kubelet runs here: tests that need pods to start or fail drive their
 * status (test/support/kubePods.ts) and say "(simulated pod status)".
 */
import type { Db } from '../../../src/db/knex';
import { loadRevisionSpec } from '../../../src/pipeline/revisionSpec';
import type { SecretBox } from '../../../src/security/secretBox';
import { KubernetesTarget } from '../../../src/targets/kubernetes/kubernetesTarget';
import { LABELS } from '../../../src/targets/kubernetes/names';
import { MANAGED_KINDS } from '../../../src/targets/kubernetes/objects';
import { loadKubeSettings } from '../../../src/targets/kubernetes/settings';
import { DeployFailedError } from '../../../src/targets/target';
import { testConfig, testDb, testSecretBox } from '../../support/env';
import { KUBE_BUILD_TIMEOUT_MS, startTestCluster, type TestCluster } from '../../support/kubeCluster';
import { graphxAccount, kubeDeployment, kubeRevision, TEST_DIGEST, type GraphxAccount } from '../../support/kubeFixtures';
import { keepPodsReady, simulatePods, waitForPods, type SimulatedState } from '../../support/kubePods';

let cluster: TestCluster;
let account: GraphxAccount;
let db: Db;
let secretBox: SecretBox;
let namespace: string;

const config = testConfig();

function target(overrides: Record<string, string> = {}): KubernetesTarget {
  const settings = loadKubeSettings(
    { GRAPHX_KUBE_NAMESPACE: namespace, GRAPHX_KUBE_BASE_DOMAIN: 'apps.test', GRAPHX_KUBE_INGRESS_CLASS: 'nginx', ...overrides },
    config.databaseUrl,
  );
  return new KubernetesTarget({
    config,
    db,
    secretBox,
    settings,
    api: account.api,
    timings: { pollMs: 200, unschedulableAfterMs: 0, notReadyAfterMs: 0, timeoutMs: 60_000 },
  });
}

const selectorOf = (deploymentId: string, revisionId?: string) =>
  `${LABELS.deployment}=${deploymentId}${revisionId ? `,${LABELS.revision}=${revisionId}` : ''}`;

beforeAll(async () => {
  cluster = await startTestCluster();
  account = await graphxAccount(cluster, 1);
  namespace = account.managed[0] as string;
  db = testDb();
  secretBox = testSecretBox(config);
}, KUBE_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await db?.destroy();
  await cluster?.stop();
});

const runOnLocalServer = () => (cluster?.real ? test.skip : test);

describe('rollouts', () => {
  (process.env.GRAPHX_TEST_KUBE === 'real' ? test.skip : test)(
    'a revision rolls out: progress from the Deployment status, DEPLOYED at the route URL (simulated pod status)',
    async () => {
      const { deploymentId, revisionId, name } = await kubeDeployment(db, secretBox, namespace, {
        resourceSpec: { min_scale: 2 },
        secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-live-secret' }],
      });
      const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId));
      const lines: string[] = [];
      try {
        const url = await target().rollout(await loadRevisionSpec(db, secretBox, revisionId), {
          phase: (_phase, line) => line && lines.push(line),
        });
        expect(url).toBe(`https://${name}.apps.test`);
      } finally {
        await ready();
      }
      expect(lines[0]).toMatch(/^Applied \d+ objects to namespace /);
      expect(lines.some((line) => /of 2 .*(updated|available)/.test(line))).toBe(true);
      expect(lines).toContainEqual(expect.stringMatching(/2 of 2 replicas available/));
      const row = await db('deployments').where({ id: deploymentId }).first('active_revision_id', 'url');
      expect(row).toEqual({ active_revision_id: revisionId, url: `https://${name}.apps.test` });
      expect((await db('revisions').where({ id: revisionId }).first('status')).status).toBe('DEPLOYED');
      const pods = await account.api.list('v1', 'Pod', namespace, { labelSelector: selectorOf(deploymentId) });
      expect(pods).toHaveLength(2);
    },
  );

  runOnLocalServer()(
    'a changed revision rolls; the old ReplicaSet keeps serving until the new one is available (simulated pod status)',
    async () => {
      const kube = target();
      const { deploymentId, revisionId: first } = await kubeDeployment(db, secretBox, namespace, {
        resourceSpec: { min_scale: 2 },
      });
      const firstReady = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId, first));
      await kube.rollout(await loadRevisionSpec(db, secretBox, first));
      const second = await kubeRevision(db, secretBox, deploymentId, namespace, { resourceSpec: { min_scale: 2 } });
      const rolling = kube.rollout(await loadRevisionSpec(db, secretBox, second));
      const fresh = await waitForPods(cluster.admin, namespace, selectorOf(deploymentId, second));
      // The new pods are not ready: both old pods still exist and are available, and the rollout waits.
      const sets = (await account.api.list('apps/v1', 'ReplicaSet', namespace, {
        labelSelector: selectorOf(deploymentId),
      })) as any[];
      const old = sets.find((set) => set.metadata.labels[LABELS.revision] === first);
      expect(old.status.availableReplicas).toBe(2);
      const settled = await Promise.race([
        rolling.then(() => 'done'),
        new Promise((resolve) => setTimeout(() => resolve('waiting'), 1500)),
      ]);
      expect(settled).toBe('waiting');
      await firstReady();
      const secondReady = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId, second));
      await simulatePods(cluster.admin, fresh, 'ready');
      await rolling;
      await secondReady();
      const after = (await account.api.list('apps/v1', 'ReplicaSet', namespace, {
        labelSelector: selectorOf(deploymentId),
      })) as any[];
      expect(after.find((set) => set.metadata.labels[LABELS.revision] === first)?.spec.replicas).toBe(0);
      expect(after.find((set) => set.metadata.labels[LABELS.revision] === second)?.status.availableReplicas).toBe(2);
      // The older revision's Secret is gone; the new one's is there.
      const secrets = await account.api.list('v1', 'Secret', namespace, { labelSelector: selectorOf(deploymentId) });
      expect(secrets.map((secret) => secret.metadata.labels?.[LABELS.revision])).toEqual([second]);
    },
  );

  const failures: Array<[SimulatedState, RegExp]> = [
    [
      'image-pull-failure',
      /^Image pull failed for container agent-server \(ImagePullBackOff\): Back-off pulling image "registry\.test:5000\/graphx\/app@sha256:[0-9a-f]{64}": ErrImagePull: manifest unknown/,
    ],
    ['crash-loop', /^Container agent-server is crash-looping: restarted 4 times \(last exit code 1, Error\)/],
    ['unschedulable', /^Pod \S+ cannot be scheduled: 0\/3 nodes are available: 3 Insufficient memory\./],
    ['failed-probe', /^Container agent-server was restarted: Startup probe failed: HTTP probe failed with statuscode: 503/],
  ];
  for (const [state, message] of failures) {
    runOnLocalServer()(
      `a revision whose pods hit ${state} ends DEPLOY_FAILED with Kubernetes' reason; the active revision keeps serving (simulated pod status)`,
      async () => {
        const kube = target();
        const { deploymentId, revisionId: good } = await kubeDeployment(db, secretBox, namespace);
        const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId, good));
        await kube.rollout(await loadRevisionSpec(db, secretBox, good));
        const bad = await kubeRevision(db, secretBox, deploymentId, namespace);
        const rolling = kube.rollout(await loadRevisionSpec(db, secretBox, bad));
        rolling.catch(() => {});
        await simulatePods(cluster.admin, await waitForPods(cluster.admin, namespace, selectorOf(deploymentId, bad)), state);
        const error = await rolling.then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(DeployFailedError);
        expect((error as Error).message).toMatch(message);
        await ready();
        // The Deployment runs the good revision's image again; the failed revision's pods go.
        const deployment = (
          await account.api.list('apps/v1', 'Deployment', namespace, { labelSelector: selectorOf(deploymentId) })
        )[0] as any;
        expect(deployment.spec.template.metadata.labels[LABELS.revision]).toBe(good);
        expect(deployment.spec.template.spec.containers[0].image).toContain(TEST_DIGEST(good));
        expect((await db('deployments').where({ id: deploymentId }).first('active_revision_id')).active_revision_id).toBe(good);
      },
    );
  }

  runOnLocalServer()('rollback: a redeploy of an older revision restores its image digest (simulated pod status)', async () => {
    const kube = target();
    const { deploymentId, revisionId: first } = await kubeDeployment(db, secretBox, namespace);
    const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId));
    try {
      await kube.rollout(await loadRevisionSpec(db, secretBox, first));
      const second = await kubeRevision(db, secretBox, deploymentId, namespace);
      await kube.rollout(await loadRevisionSpec(db, secretBox, second));
      // A redeploy is a new revision whose build step recorded the earlier revision's image again.
      const redeploy = await kubeRevision(db, secretBox, deploymentId, namespace);
      await db('revisions')
        .where({ id: redeploy })
        .update({ image_digest: TEST_DIGEST(first), redeployed_from_revision_id: first });
      await kube.rollout(await loadRevisionSpec(db, secretBox, redeploy));
    } finally {
      await ready();
    }
    const deployment = (
      await account.api.list('apps/v1', 'Deployment', namespace, { labelSelector: selectorOf(deploymentId) })
    )[0] as any;
    expect(deployment.spec.template.spec.containers[0].image).toBe(`registry.test:5000/graphx/app@${TEST_DIGEST(first)}`);
  });

  runOnLocalServer()(
    'delete removes every object of the deployment, its pods and service tokens (simulated pod status)',
    async () => {
      const kube = target();
      const { deploymentId, revisionId } = await kubeDeployment(db, secretBox, namespace, {
        resourceSpec: { min_scale: 1, max_scale: 3 },
      });
      const ready = keepPodsReady(cluster.admin, namespace, selectorOf(deploymentId));
      await kube.rollout(await loadRevisionSpec(db, secretBox, revisionId));
      await ready();
      await kube.stopDeployment(deploymentId);
      for (const { apiVersion, kind } of [
        ...MANAGED_KINDS.filter((k) => k.kind !== 'HTTPRoute'),
        { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
        { apiVersion: 'v1', kind: 'Pod' },
      ]) {
        const left = await cluster.admin.list(apiVersion, kind, namespace, {
          labelSelector: `${LABELS.deployment}=${deploymentId}`,
        });
        expect(`${kind}: ${left.length}`).toBe(`${kind}: 0`);
      }
      expect(await db('service_tokens').where({ deployment_id: deploymentId })).toEqual([]);
    },
  );

  runOnLocalServer()(
    'a second worker resumes a rollout the first left waiting, on the same Deployment (simulated pod status)',
    async () => {
      const { deploymentId, revisionId } = await kubeDeployment(db, secretBox, namespace);
      let stopFirst = false;
      const first = target().rollout(await loadRevisionSpec(db, secretBox, revisionId), {
        phase: () => {},
        cancelled: () => stopFirst,
      });
      const pods = await waitForPods(cluster.admin, namespace, selectorOf(deploymentId, revisionId));
      stopFirst = true; // The first worker is gone mid-rollout (its activity will be retried elsewhere).
      await expect(first).rejects.toThrow(/cancelled/);
      const resumed = target().rollout(await loadRevisionSpec(db, secretBox, revisionId));
      await simulatePods(cluster.admin, pods, 'ready');
      await resumed;
      const deployments = await account.api.list('apps/v1', 'Deployment', namespace, { labelSelector: selectorOf(deploymentId) });
      const sets = await account.api.list('apps/v1', 'ReplicaSet', namespace, { labelSelector: selectorOf(deploymentId) });
      expect([deployments.length, sets.length]).toEqual([1, 1]);
    },
  );
});
