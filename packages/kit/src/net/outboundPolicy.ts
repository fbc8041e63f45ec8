/**
 * Which addresses the control plane may send a request to when a tenant chose the URL (an OAuth provider's token
 * endpoint). Without this a tenant could aim our server-side POST at the cloud metadata service, our own database
 * host or anything else on our network (SSRF). Loopback, link-local, unspecified, multicast and reserved addresses are
 * always refused; private ranges (RFC 1918, unique-local IPv6, carrier-grade NAT) only when the operator allows them,
 * because a self-hosted code host on the company network is a real case.
 */
import dnsCallback from 'node:dns';
import dns from 'node:dns/promises';
import net from 'node:net';

const ALWAYS_REFUSED: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const PRIVATE: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
];

function blockListOf(ranges: Array<[string, number, 'ipv4' | 'ipv6']>): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}

const alwaysRefused = blockListOf(ALWAYS_REFUSED);
const privateRanges = blockListOf(PRIVATE);

/** An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is judged as the IPv4 address it carries. */
function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: net.isIPv6(address) ? 'ipv6' : 'ipv4' };
}

/** True when a request to `address` must not be sent. */
export function isRefusedAddress(address: string, allowPrivateNetwork: boolean): boolean {
  const { address: plain, family } = normalise(address);
  if (alwaysRefused.check(plain, family)) return true;
  return !allowPrivateNetwork && privateRanges.check(plain, family);
}

/**
 * The addresses a URL's host stands for: itself when it is a literal IP, else every address it resolves to; null when
 * it does not resolve (the request itself then reports that).
 */
export async function resolveUrlHost(url: string): Promise<{ host: string; addresses: string[] } | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return { host, addresses: [host] };
  try {
    return { host, addresses: (await dns.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address) };
  } catch {
    return null;
  }
}

/** A connection refused by the policy; `address` is what the host resolved to. */
export class RefusedDestinationError extends Error {
  override name = 'RefusedDestinationError';
  readonly code = 'EGRAPHXREFUSED';
  constructor(readonly address: string) {
    super(`refused destination ${address}`);
  }
}

/**
 * A `lookup` for `http(s).request`/`net.connect` that refuses the connection when the host resolves to a refused
 * address. The check happens on the very addresses the socket then connects to, so a name that resolves differently
 * the second time (DNS rebinding) cannot slip past it.
 */
export function guardedLookup(allowPrivateNetwork: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dnsCallback.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return (callback as (error: Error) => void)(error);
      const refused = addresses.find((entry) => isRefusedAddress(entry.address, allowPrivateNetwork));
      if (refused) return (callback as (error: Error) => void)(new RefusedDestinationError(refused.address));
      if ((options as { all?: boolean }).all)
        return (callback as (error: null, all: dnsCallback.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      (callback as (error: null, address: string, family: number) => void)(null, first.address, first.family);
    });
  };
}
