/**
 * Names and labels of the Kubernetes objects of a deployment (CONTRACT §9): every object carries
 * `app.kubernetes.io/managed-by: graphx`, `graphx.dev/deployment: <id>` and `graphx.dev/revision: <id>`, so delete
 * and rollback act by label selector; names derive from the deployment, so any worker finds the same objects.
 */

export const FIELD_MANAGER = 'graphx';

export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  name: 'app.kubernetes.io/name',
  component: 'app.kubernetes.io/component',
  deployment: 'graphx.dev/deployment',
  revision: 'graphx.dev/revision',
  tenant: 'graphx.dev/tenant',
} as const;

/** The pod template annotation carrying the revision's image digest (rollback shows it; `kubectl describe` too). */
export const IMAGE_ANNOTATION = 'graphx.dev/image';

export type Component = 'api' | 'queue' | 'database';

/** Label selector of every object of a deployment (what delete removes). */
export function deploymentSelector(deploymentId: string): string {
  return `${LABELS.managedBy}=graphx,${LABELS.deployment}=${deploymentId}`;
}

/** Labels of a deployment's object; `component` for the workloads and what selects their pods. */
export function objectLabels(ids: { deploymentId: string; revisionId: string; tenantId: string }, component?: Component) {
  return {
    [LABELS.managedBy]: 'graphx',
    [LABELS.name]: 'graphx-app',
    [LABELS.deployment]: ids.deploymentId,
    [LABELS.revision]: ids.revisionId,
    [LABELS.tenant]: ids.tenantId,
    ...(component ? { [LABELS.component]: component } : {}),
  };
}

/** The selector of a workload's pods: never the revision (a Deployment's selector is immutable). */
export function podSelector(deploymentId: string, component: Component): Record<string, string> {
  return { [LABELS.deployment]: deploymentId, [LABELS.component]: component };
}

/**
 * Base name of a deployment's objects: its name (cut to 40) and the first 12 hex digits of its id, so two tenants'
 * deployments of the same name in one namespace never share an object, and an operator still reads which app it is.
 * A DNS-1035 label (Service names need one), at most 53 characters, so suffixes such as `-queue` still fit in 63.
 */
export function baseName(deployment: { deploymentId: string; deploymentName: string }): string {
  const hex = deployment.deploymentId.replace(/-/g, '').slice(0, 12).toLowerCase();
  const name = deployment.deploymentName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `${name || 'app'}-${hex}`;
}

/** The Secret of one revision (deployment secrets, database URI, service token): `<base>-<revision 12 hex>`. */
export function revisionSecretName(base: string, revisionId: string): string {
  return `${base}-${revisionId.replace(/-/g, '').slice(0, 12).toLowerCase()}`;
}
