/**
 * What the object builders take: one revision of one deployment, everything resolved (image digest, namespace,
 * secrets, database URI, service token), so the builders are pure functions and a table test can read each field.
 */
import type { ResourceSpec } from '../../../pipeline/resourceSpec';
import type { KubeSettings } from '../settings';

/** A Kubernetes object as applied: plain JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface RevisionObjectsInput {
  deploymentId: string;
  revisionId: string;
  tenantId: string;
  deploymentName: string;
  /** Host label of the deployment URL (`<routeKey>.<base domain>`) unless custom_url names a host. */
  routeKey: string;
  namespace: string;
  /** The image by digest: `<registry>/<repository>@sha256:…`. */
  image: string;
  /** True when graphx built the image (FROM graphx-runtime: its Node takes the V8 flags). */
  builtImage: boolean;
  /** graphx.json relative to the image's working directory. */
  configPath: string;
  resourceSpec: ResourceSpec;
  customUrl: string | null;
  /** The deployment's secrets (environment of the app). */
  secrets: Array<{ name: string; value: string }>;
  /** The service token of this revision's pods (the control plane keeps only its hash). */
  serviceToken: string;
  /** The deployment database's password (its role on the shared server, or the in-cluster database's). */
  databasePassword: string;
  /** Role and database name on the shared server (`gx_<hex>`). */
  databaseName: string;
}

export type ObjectSettings = Pick<
  KubeSettings,
  'route' | 'controlPlane' | 'database' | 'publicEgress' | 'privateCidrs' | 'registry' | 'rolloutTimeoutSeconds'
>;
