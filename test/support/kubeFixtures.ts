/**
 * What the Kubernetes target tests share: graphx's own service account with exactly the Role the manifests ship
 * (deploy/kubernetes/managed-namespace/role.yaml, bound in each managed namespace), its token from the TokenRequest
 * API, and deployments whose revisions carry an image digest, written straight to the database.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import type { Db } from '../../src/db/knex';
import { loadRevisionSpec } from '../../src/pipeline/revisionSpec';
import type { SecretBox } from '../../src/security/secretBox';
import { KubeApi } from '../../src/targets/kubernetes/kubeApi';
import { revisionServiceToken } from '../../src/targets/kubernetes/revisionInput';
import type { KubeObject } from '../../src/targets/kubernetes/objects/types';
import { createDeployment, addRevision, type RevisionOptions } from '../integration/activities/pipelineFixtures';
import type { GraphxConfig } from '../../src/config';
import { createTestNamespace, startTestCluster, type TestCluster } from './kubeCluster';
import { testDb, testSecretBox } from './env';

const ROLE_FILE = path.resolve(__dirname, '..', '..', 'deploy', 'kubernetes', 'managed-namespace', 'role.yaml');

export interface GraphxAccount {
  /** graphx's namespace (where its service account lives). */
  home: string;
  /** The namespaces it manages (Role and RoleBinding in each). */
  managed: string[];
  /** The API as graphx's service account. */
  api: KubeApi;
  /** A kubeconfig file with the same credentials (KUBECONFIG of a control plane under test). */
  kubeconfig: string;
}

/** graphx's service account in a namespace of its own, bound to the shipped Role in `managedCount` new namespaces. */
export async function graphxAccount(cluster: TestCluster, managedCount = 1): Promise<GraphxAccount> {
  const home = await createTestNamespace(cluster, 'graphx');
  const managed: string[] = [];
  for (let index = 0; index < managedCount; index += 1) managed.push(await createTestNamespace(cluster, 'apps'));
  await cluster.admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'graphx', namespace: home } });
  const documents = yaml.loadAll(fs.readFileSync(ROLE_FILE, 'utf8')) as KubeObject[];
  for (const namespace of managed) {
    for (const document of documents) {
      const object = structuredClone(document) as any;
      object.metadata.namespace = namespace;
      if (object.kind === 'RoleBinding') object.subjects[0].namespace = home;
      await cluster.admin.apply(object);
    }
  }
  const request = await cluster.admin.request('POST', `/api/v1/namespaces/${home}/serviceaccounts/graphx/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kubeconfig = cluster.kubeconfigForToken(request.status.token);
  return { home, managed, api: KubeApi.fromFile(kubeconfig), kubeconfig };
}

export const TEST_DIGEST = (seed: string) => `sha256:${crypto.createHash('sha256').update(seed).digest('hex')}`;

/** Records an image for a revision as the pushing builder would: a registry reference and its digest. */
export async function recordImage(db: Db, revisionId: string, seed = revisionId): Promise<string> {
  const digest = TEST_DIGEST(seed);
  await db('revisions')
    .where({ id: revisionId })
    .update({ image_ref: `registry.test:5000/graphx/app:${revisionId.slice(0, 8)}`, image_digest: digest });
  return digest;
}

/** A deployment in `namespace` (listener_config.k8s_namespace) whose first revision has an image. */
export async function kubeDeployment(
  db: Db,
  secretBox: SecretBox,
  namespace: string,
  options: RevisionOptions = {},
): Promise<{ deploymentId: string; revisionId: string; name: string }> {
  const created = await createDeployment(db, secretBox, options);
  await setNamespace(db, created.deploymentId, namespace);
  await recordImage(db, created.revisionId);
  return created;
}

/**
 * Records `revisionId` as its deployment's active revision rolled out on the cluster, as a rollout leaves it (the
 * revision's service token row is the target's mark), without applying anything: a restart's reconcile applies it.
 */
export async function markRolledOut(db: Db, secretBox: SecretBox, deploymentId: string, revisionId: string): Promise<void> {
  await db('deployments').where({ id: deploymentId }).update({ active_revision_id: revisionId });
  await revisionServiceToken(db, secretBox, await loadRevisionSpec(db, secretBox, revisionId));
}

/** A further revision with its own image. */
export async function kubeRevision(
  db: Db,
  secretBox: SecretBox,
  deploymentId: string,
  namespace: string,
  options: RevisionOptions = {},
): Promise<string> {
  const revisionId = await addRevision(db, secretBox, deploymentId, options);
  await setNamespace(db, deploymentId, namespace);
  await recordImage(db, revisionId);
  return revisionId;
}

async function setNamespace(db: Db, deploymentId: string, namespace: string): Promise<void> {
  for (const table of ['deployments', 'revisions'] as const) {
    const column = table === 'deployments' ? 'id' : 'deployment_id';
    const rows: Array<{ id: string; source_config: Record<string, unknown> }> = await db(table)
      .where({ [column]: deploymentId })
      .select('id', 'source_config');
    for (const row of rows) {
      await db(table)
        .where({ id: row.id })
        .update({ source_config: { ...row.source_config, listener_config: { k8s_namespace: namespace } } });
    }
  }
}

/** What a Kubernetes target test file runs against: its own cluster, graphx's account managing one namespace, the database. */
export interface KubeTestbed {
  cluster: TestCluster;
  account: GraphxAccount;
  /** The one namespace graphx manages. */
  namespace: string;
  db: Db;
  secretBox: SecretBox;
  stop: () => Promise<void>;
}

export async function startKubeTestbed(config: GraphxConfig): Promise<KubeTestbed> {
  const cluster = await startTestCluster();
  const account = await graphxAccount(cluster, 1);
  const db = testDb();
  return {
    cluster,
    account,
    namespace: account.managed[0] as string,
    db,
    secretBox: testSecretBox(config),
    stop: async () => {
      await db.destroy();
      await cluster.stop();
    },
  };
}
