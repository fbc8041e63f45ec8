/**
 * What create and PATCH say about `resource_spec` (issue 21, point 4): a field asking for privileges is a 422 on
 * every runner (CONTRACT §9); on Kubernetes a field without effect is a 422 naming it, and a namespace graphx does
 * not manage too; on the process and container runners each field without effect is a warning (in the response and
 * in the revision's log), never silence.
 */
import { ValidationError, type ValidationIssue } from '@graphx/kit/errors';
import {
  ineffectiveFields,
  privilegeViolations,
  type KubernetesCapabilities,
  type ResourceSpec,
  type Runner,
} from '../pipeline/resourceSpec';
import type { GraphxConfig } from '../config';
import type { SourceConfig } from './schemas';

/** What the API knows of where revisions run. `auto` is decided by the worker: warnings name the container runner's. */
export interface RunnerPolicy {
  runner: Runner | 'auto';
  /** Kubernetes only: what the target can give effect to, and where it may act. */
  kubernetes?: KubernetesCapabilities & { managedNamespaces: string[]; selfServiceAccount: string };
}

const RESOURCE_SPEC_LOC = ['body', 'source_config', 'resource_spec'];

/**
 * Checks `sourceConfig` against the policy; returns the warnings to show.
 * @throws ValidationError (422) naming every refused field.
 */
export function checkResourceSpec(sourceConfig: SourceConfig, policy: RunnerPolicy): string[] {
  const spec = (sourceConfig.resource_spec ?? null) as ResourceSpec | null;
  const issues: ValidationIssue[] = privilegeViolations(spec, {
    selfServiceAccount: policy.kubernetes?.selfServiceAccount,
  }).map((violation) => ({
    loc: [...RESOURCE_SPEC_LOC, ...violation.path],
    msg: `${violation.path.join('.')} ${violation.message}`,
    type: 'value_error.privileged',
  }));
  const runner: Runner = policy.runner === 'auto' ? 'container' : policy.runner;
  const without = ineffectiveFields(spec, runner, policy.kubernetes);
  if (runner === 'kubernetes') {
    for (const { field, reason } of without) {
      issues.push({
        loc: [...RESOURCE_SPEC_LOC, field],
        msg: `${field} cannot take effect on Kubernetes: ${reason}`,
        type: 'value_error.no_effect',
      });
    }
    const namespace = sourceConfig.listener_config?.k8s_namespace;
    const managed = policy.kubernetes?.managedNamespaces ?? [];
    if (namespace && !managed.includes(namespace)) {
      issues.push({
        loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
        msg: `k8s_namespace '${namespace}' is not a namespace graphx manages (${managed.join(', ')})`,
        type: 'value_error.namespace',
      });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
  if (runner === 'kubernetes') return [];
  const warnings = without.map(({ field, reason }) => `resource_spec.${field} has no effect: ${reason}.`);
  if (sourceConfig.listener_config?.k8s_namespace) {
    warnings.push(`listener_config.k8s_namespace has no effect: the ${runner} runner does not run on Kubernetes.`);
  }
  return warnings;
}

/** The policy of a control plane whose revisions run where GRAPHX_RUNNER says (Kubernetes: from the target's settings). */
export function runnerPolicyOf(config: Pick<GraphxConfig, 'runner' | 'kube'>): RunnerPolicy {
  if (config.runner !== 'kubernetes') return { runner: config.runner };
  const kube = config.kube;
  return {
    runner: 'kubernetes',
    kubernetes: {
      inClusterDatabase: kube?.database.mode === 'in-cluster',
      // The runtime splits into API and queue sides (GRAPHX_RUNTIME_ROLE): queue_* fields make a queue Deployment.
      queueRole: true,
      managedNamespaces: kube?.managedNamespaces ?? [],
      selfServiceAccount: kube?.selfServiceAccount ?? 'graphx',
    },
  };
}
