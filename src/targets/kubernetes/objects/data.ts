/**
 * The revision's Secret (the deployment's secrets, its database URI and service token: what must not be in a pod
 * spec) and, with GRAPHX_KUBE_DATABASE=in-cluster, the deployment's own PostgreSQL: a StatefulSet with a claim sized
 * by `db_storage_gi`, CPU and memory by `db_*`, `max_connections` by `db_max_connections`, and its Service.
 */
import { INSTANCE_ENV } from '@graphx/contract/instanceEnv';
import { baseName, objectLabels, podSelector, revisionSecretName } from '../names';
import { DATABASE_PORT } from './network';
import { containerResources, storageQuantity } from './quantities';
import type { KubeObject, ObjectSettings, RevisionObjectsInput } from './types';

export const DEFAULT_DB_STORAGE_GI = 10;
export const DEFAULT_DB_MAX_CONNECTIONS = 100;
/** uid of the `postgres` user of the official PostgreSQL images. */
const POSTGRES_UID = 999;

export function databaseServiceName(input: Pick<RevisionObjectsInput, 'deploymentId' | 'deploymentName'>): string {
  return `${baseName(input)}-db`;
}

/** `DATABASE_URI` of the app: the shared server's role and database, or the in-cluster database's Service. */
export function databaseUri(input: RevisionObjectsInput, settings: ObjectSettings): string {
  const inCluster = settings.database.mode === 'in-cluster';
  const host = inCluster ? `${databaseServiceName(input)}.${input.namespace}.svc` : settings.database.host;
  const port = inCluster ? DATABASE_PORT : settings.database.port;
  const name = input.databaseName;
  return `postgresql://${name}:${encodeURIComponent(input.databasePassword)}@${host}:${port}/${name}`;
}

function base64(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64');
}

/** The revision's Secret, read by its pods through `envFrom`. `data`, not `stringData`: a re-apply compares equal. */
export function revisionSecret(input: RevisionObjectsInput, settings: ObjectSettings): KubeObject {
  const data: Record<string, string> = {};
  for (const secret of input.secrets) data[secret.name] = base64(secret.value);
  data[INSTANCE_ENV.databaseUri] = base64(databaseUri(input, settings));
  data[INSTANCE_ENV.serviceToken] = base64(input.serviceToken);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: revisionSecretName(baseName(input), input.revisionId),
      namespace: input.namespace,
      labels: objectLabels(input),
    },
    type: 'Opaque',
    data,
  };
}

/** The in-cluster database's objects (its credentials Secret, Service and StatefulSet), or none on the shared server. */
export function inClusterDatabase(input: RevisionObjectsInput, settings: ObjectSettings): KubeObject[] {
  if (settings.database.mode !== 'in-cluster') return [];
  const spec = input.resourceSpec;
  const name = databaseServiceName(input);
  const labels = objectLabels(input, 'database');
  const metadata = { name, namespace: input.namespace, labels };
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata,
      type: 'Opaque',
      data: {
        POSTGRES_USER: base64(input.databaseName),
        POSTGRES_DB: base64(input.databaseName),
        POSTGRES_PASSWORD: base64(input.databasePassword),
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: {
        type: 'ClusterIP',
        selector: podSelector(input.deploymentId, 'database'),
        ports: [{ name: 'postgres', port: DATABASE_PORT, targetPort: 'postgres', protocol: 'TCP' }],
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata,
      spec: {
        serviceName: name,
        replicas: 1,
        selector: { matchLabels: podSelector(input.deploymentId, 'database') },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: POSTGRES_UID,
              runAsGroup: POSTGRES_UID,
              fsGroup: POSTGRES_UID,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'postgres',
                image: settings.database.image,
                args: ['-c', `max_connections=${spec.db_max_connections ?? DEFAULT_DB_MAX_CONNECTIONS}`],
                envFrom: [{ secretRef: { name } }],
                env: [{ name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' }],
                ports: [{ name: 'postgres', containerPort: DATABASE_PORT, protocol: 'TCP' }],
                resources: containerResources({
                  cpu: spec.db_cpu,
                  cpuLimit: spec.db_cpu_limit,
                  memoryMb: spec.db_memory_mb,
                  memoryLimitMb: spec.db_memory_limit_mb,
                }),
                readinessProbe: { exec: { command: ['pg_isready', '-U', input.databaseName] }, periodSeconds: 5 },
                securityContext: {
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ['ALL'] },
                },
                volumeMounts: [
                  { name: 'data', mountPath: '/var/lib/postgresql/data' },
                  { name: 'run', mountPath: '/var/run/postgresql' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'run', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              ...(settings.database.storageClassName ? { storageClassName: settings.database.storageClassName } : {}),
              resources: { requests: { storage: storageQuantity(spec.db_storage_gi ?? DEFAULT_DB_STORAGE_GI) } },
            },
          },
        ],
      },
    },
  ];
}
