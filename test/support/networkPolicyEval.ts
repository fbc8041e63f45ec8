/**
 * NetworkPolicy semantics for tests where no network plugin enforces them (no CNI runs beside the test API server):
 * does a policy, as the API server stored and defaulted it, admit traffic to or from a peer? matchLabels,
 * namespace/pod selectors, ipBlock with except, and ports as Kubernetes defines them; matchExpressions are refused
 * rather than guessed.
 */

export interface Peer {
  /** The peer's namespace and its labels (`kubernetes.io/metadata.name` included); absent for an address outside. */
  namespace?: { name: string; labels: Record<string, string> };
  podLabels?: Record<string, string>;
  ip: string;
  port: number;
  protocol?: 'TCP' | 'UDP';
}

function matches(selector: any, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  if (selector.matchExpressions?.length) throw new Error('matchExpressions are not evaluated here');
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);
}

function ipToNumber(ip: string): number {
  return ip.split('.').reduce((total, part) => total * 256 + Number(part), 0);
}

export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = Number(bits ?? 32);
  const mask = size === 0 ? 0 : 2 ** 32 - 2 ** (32 - size);
  return (ipToNumber(ip) & mask) >>> 0 === (ipToNumber(base as string) & mask) >>> 0;
}

function peerMatches(rulePeer: any, peer: Peer, policyNamespace: string): boolean {
  if (rulePeer.ipBlock) {
    return (
      inCidr(peer.ip, rulePeer.ipBlock.cidr) && !(rulePeer.ipBlock.except ?? []).some((cidr: string) => inCidr(peer.ip, cidr))
    );
  }
  if (!peer.namespace || !peer.podLabels) return false;
  const namespaceOk = rulePeer.namespaceSelector
    ? matches(rulePeer.namespaceSelector, peer.namespace.labels)
    : peer.namespace.name === policyNamespace;
  return namespaceOk && matches(rulePeer.podSelector, peer.podLabels);
}

function portMatches(rulePorts: any[] | undefined, peer: Peer): boolean {
  if (!rulePorts || rulePorts.length === 0) return true;
  return rulePorts.some(
    (port) => (port.protocol ?? 'TCP') === (peer.protocol ?? 'TCP') && (port.port === undefined || port.port === peer.port),
  );
}

/** True when `policy` admits traffic from its pods to `peer` (egress) or from `peer` to its pods (ingress). */
export function admits(policy: any, direction: 'egress' | 'ingress', peer: Peer): boolean {
  const rules: any[] = policy.spec[direction] ?? [];
  const peersKey = direction === 'egress' ? 'to' : 'from';
  return rules.some(
    (rule) =>
      (!rule[peersKey] ||
        rule[peersKey].length === 0 ||
        rule[peersKey].some((p: any) => peerMatches(p, peer, policy.metadata.namespace))) &&
      portMatches(rule.ports, peer),
  );
}
