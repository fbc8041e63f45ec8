/**
 * Every object of one revision, in the order they are applied: what pods read first (Secrets, the database), then
 * the NetworkPolicy (before any pod of the revision exists), the workloads and their autoscalers, the Service and the
 * route last (the URL answers once something serves it).
 */
import { inClusterDatabase, revisionSecret } from './data';
import { appService, networkPolicy, route } from './network';
import type { KubeObject, ObjectSettings, RevisionObjectsInput } from './types';
import { appDeployment, autoscaler, hasQueueSide } from './workload';

export type { KubeObject, ObjectSettings, RevisionObjectsInput } from './types';
export { deploymentUrl } from './network';
export { autoscaled, sizing, workloadName } from './workload';

export function revisionObjects(input: RevisionObjectsInput, settings: ObjectSettings): KubeObject[] {
  const queue = hasQueueSide(input.resourceSpec);
  const objects: Array<KubeObject | null> = [
    revisionSecret(input, settings),
    ...inClusterDatabase(input, settings),
    networkPolicy(input, settings),
    appDeployment(input, 'api', settings),
    autoscaler(input, 'api'),
    ...(queue ? [appDeployment(input, 'queue', settings), autoscaler(input, 'queue')] : []),
    appService(input),
    route(input, settings),
  ];
  return objects.filter((object): object is KubeObject => object !== null);
}

/** The kinds graphx creates for a deployment (what delete lists by label), with their API paths. */
export const MANAGED_KINDS = [
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', plural: 'ingresses' },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes' },
  { apiVersion: 'v1', kind: 'Service', plural: 'services' },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers' },
  { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', plural: 'statefulsets' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', plural: 'networkpolicies' },
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims' },
] as const;
