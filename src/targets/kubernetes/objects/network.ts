/**
 * How traffic reaches a deployment and where its pods may go: a Service, a route for the deployment URL (an Ingress
 * or a Gateway API HTTPRoute; custom_url's host when given), and a NetworkPolicy that admits the ingress
 * controller's namespace only and lets the pods reach DNS, their own database, the control plane's internal API and,
 * when allowed, public addresses, never a private range (another tenant's pods, the node, the cloud's metadata).
 */
import { RUNTIME_PORT } from '@graphx/contract/image';
import { baseName, LABELS, objectLabels, podSelector } from '../names';
import type { KubeObject, ObjectSettings, RevisionObjectsInput } from './types';

export const SERVICE_PORT = 80;
export const DATABASE_PORT = 5432;

/** The host of the deployment URL: custom_url's, else `<route key>.<base domain>`. */
export function deploymentHost(input: Pick<RevisionObjectsInput, 'customUrl' | 'routeKey'>, settings: ObjectSettings): string {
  if (input.customUrl) {
    try {
      return new URL(input.customUrl).hostname;
    } catch {
      // Not a URL: the stored value is a bare host name.
      return input.customUrl;
    }
  }
  return `${input.routeKey}.${settings.route.baseDomain}`;
}

/** The deployment URL: through the route, or the Service's cluster address when no route is made. */
export function deploymentUrl(input: RevisionObjectsInput, settings: ObjectSettings): string {
  if (settings.route.kind === 'none') return `http://${baseName(input)}.${input.namespace}.svc`;
  return `${settings.route.scheme}://${deploymentHost(input, settings)}`;
}

export function appService(input: RevisionObjectsInput): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: baseName(input), namespace: input.namespace, labels: objectLabels(input, 'api') },
    spec: {
      type: 'ClusterIP',
      selector: podSelector(input.deploymentId, 'api'),
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

export function route(input: RevisionObjectsInput, settings: ObjectSettings): KubeObject | null {
  const host = deploymentHost(input, settings);
  const metadata = { name: baseName(input), namespace: input.namespace, labels: objectLabels(input, 'api') };
  if (settings.route.kind === 'ingress') {
    const { ingressClassName, tlsSecretName } = settings.route;
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata,
      spec: {
        ...(ingressClassName ? { ingressClassName } : {}),
        ...(tlsSecretName ? { tls: [{ hosts: [host], secretName: tlsSecretName }] } : {}),
        rules: [
          {
            host,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: baseName(input), port: { name: 'http' } } },
                },
              ],
            },
          },
        ],
      },
    };
  }
  if (settings.route.kind === 'httproute' && settings.route.gateway) {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata,
      spec: {
        parentRefs: [{ name: settings.route.gateway.name, namespace: settings.route.gateway.namespace }],
        hostnames: [host],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: [{ name: baseName(input), port: SERVICE_PORT }],
          },
        ],
      },
    };
  }
  return null;
}

const namespaceLabel = (name: string) => ({ matchLabels: { 'kubernetes.io/metadata.name': name } });

/** The NetworkPolicy of every pod of the deployment (app, queue, database). */
export function networkPolicy(input: RevisionObjectsInput, settings: ObjectSettings): KubeObject {
  const ownPods = { matchLabels: { [LABELS.deployment]: input.deploymentId } };
  const inCluster = settings.database.mode === 'in-cluster';
  const database = inCluster
    ? { to: [{ podSelector: { matchLabels: podSelector(input.deploymentId, 'database') } }], ports: [tcp(DATABASE_PORT)] }
    : { to: [{ ipBlock: { cidr: settings.database.cidr } }], ports: [tcp(settings.database.port)] };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: baseName(input), namespace: input.namespace, labels: objectLabels(input) },
    spec: {
      podSelector: ownPods,
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        { from: [{ namespaceSelector: namespaceLabel(settings.route.fromNamespace) }], ports: [tcp(RUNTIME_PORT)] },
        ...(inCluster ? [{ from: [{ podSelector: ownPods }], ports: [tcp(DATABASE_PORT)] }] : []),
      ],
      egress: [
        {
          to: [{ namespaceSelector: namespaceLabel('kube-system'), podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        database,
        {
          to: [
            {
              namespaceSelector: namespaceLabel(settings.controlPlane.namespace),
              podSelector: { matchLabels: settings.controlPlane.podLabels },
            },
          ],
          ports: [tcp(settings.controlPlane.port)],
        },
        ...(settings.publicEgress ? [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: settings.privateCidrs } }] }] : []),
      ],
    },
  };
}

function tcp(port: number) {
  return { protocol: 'TCP', port };
}
