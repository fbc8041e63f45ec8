/**
 * From a revision (as the pipeline loads it) to the builders' input: the namespace, the image by digest, the
 * database credentials and the revision's service token. The token derives from the secret key and the revision id,
 * so a rollout run twice (a worker killed mid-rollout) applies the same Secret and records the same token row.
 */
import { InstanceStore } from '../../db/repositories/instances';
import crypto from 'node:crypto';
import type { Db } from '../../db/knex';
import { deploymentDatabaseName, deploymentDatabasePassword } from '../../pipeline/deploymentDatabase';
import type { ResourceSpec } from '../../pipeline/resourceSpec';
import type { RevisionSpec } from '../../pipeline/revisionSpec';
import { hashToken, type SecretBox } from '../../security/secretBox';
import { DeployFailedError } from '../target';
import type { RevisionObjectsInput } from './objects';
import type { KubeSettings } from './settings';

/** The namespace of a revision: `listener_config.k8s_namespace`, else the configured default. */
export function revisionNamespace(spec: RevisionSpec, settings: Pick<KubeSettings, 'defaultNamespace'>): string {
  const listener = (spec.sourceConfig as { listener_config?: { k8s_namespace?: string | null } | null }).listener_config;
  return listener?.k8s_namespace || settings.defaultNamespace;
}

/**
 * The image a pod pulls: by digest, so a tag moved later never changes what a revision runs and a rollback runs
 * exactly the earlier bytes. `ref` may already carry the digest (the image pusher's reference).
 */
export function imageByDigest(image: RevisionSpec['image']): string {
  if (!image) throw new DeployFailedError('The revision has no image to run (its build step recorded none).');
  if (image.ref.includes('@sha256:')) return image.ref;
  if (!image.digest?.startsWith('sha256:')) {
    throw new DeployFailedError(`Image ${image.ref} has no registry digest: it must be pushed to the configured registry.`);
  }
  const lastSlash = image.ref.lastIndexOf('/');
  const colon = image.ref.indexOf(':', lastSlash + 1);
  const repository = colon === -1 ? image.ref : image.ref.slice(0, colon);
  return `${repository}@${image.digest}`;
}

/** A uuid derived from `text` (the token row's id, the same on every run for one revision). */
function derivedUuid(text: string): string {
  const hex = crypto.createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The id of the service token row this target records for a revision it applies. The row is also the target's mark of
 * ownership: a deployment whose active revision has it was rolled out on the cluster (reconcile acts on those only).
 */
export function kubernetesServiceTokenId(revisionId: string): string {
  return derivedUuid(`kubernetes-service-token:${revisionId}`);
}

/** The revision's service token; its hash is recorded (once) so the control plane accepts it. */
export async function revisionServiceToken(
  db: Db,
  secretBox: SecretBox,
  spec: RevisionSpec,
): Promise<{ id: string; token: string }> {
  const token = `gxs_${secretBox.sign(`kubernetes-service-token:${spec.revisionId}`)}`;
  const id = kubernetesServiceTokenId(spec.revisionId);
  await new InstanceStore(db).ensureServiceToken(id, spec.deploymentId, hashToken(token));
  return { id, token };
}

export function revisionInput(
  spec: RevisionSpec,
  settings: KubeSettings,
  secretBox: SecretBox,
  serviceToken: string,
): RevisionObjectsInput {
  const customUrl = (spec.sourceConfig as { custom_url?: string | null }).custom_url ?? null;
  return {
    deploymentId: spec.deploymentId,
    revisionId: spec.revisionId,
    tenantId: spec.tenantId,
    deploymentName: spec.deploymentName,
    routeKey: spec.routeKey,
    namespace: revisionNamespace(spec, settings),
    image: imageByDigest(spec.image),
    // graphx builds codehost revisions FROM its runtime image (whose Node takes the V8 flags); image sources are the user's.
    builtImage: spec.source === 'codehost',
    configPath: spec.graphxConfigPath,
    resourceSpec: (spec.sourceConfig.resource_spec ?? {}) as ResourceSpec,
    customUrl,
    secrets: spec.secrets,
    serviceToken,
    databasePassword: deploymentDatabasePassword(secretBox, spec.deploymentId),
    databaseName: deploymentDatabaseName(spec.deploymentId),
  };
}
