/**
 * Host firewall for app networks. A bridged app container's packets to any address of this host (its network's
 * gateway, the host's own interfaces) reach every service bound to 0.0.0.0 there, and its forwarded packets reach a
 * cloud's metadata address (169.254.169.254: instance credentials). The engine API sets no such rules, so graphx
 * keeps one nftables table, `inet graphx_apps`: from an app network's subnet, the host answers only DNS on that
 * network's gateway (the engine's resolver) and replies to connections the host opened (the gateway's requests);
 * link-local destinations are dropped; the internet stays reachable. Subnets come and go as set elements, so one
 * table serves every deployment and a rule set is never duplicated. Needs root and `nft` on the engine's host; where
 * either is missing the containers run unconfined and a warning says so once.
 */
import { execFile } from 'node:child_process';
import { logger } from '@graphx/kit/logger';
import type { NetworkAddresses } from './engine';

const TABLE = 'inet graphx_apps';

/** Declares the table (an existing one keeps its elements) and rewrites its rules, in one nft transaction. */
const RULESET = `table ${TABLE} {
  set app_nets { type ipv4_addr; flags interval; }
  set app_gateways { type ipv4_addr; }
  chain input { type filter hook input priority filter - 10; policy accept; }
  chain forward { type filter hook forward priority filter - 10; policy accept; }
}
flush chain ${TABLE} input
flush chain ${TABLE} forward
add rule ${TABLE} input ip saddr @app_nets ct state established,related accept
add rule ${TABLE} input ip saddr @app_nets ip daddr @app_gateways meta l4proto { tcp, udp } th dport 53 accept
add rule ${TABLE} input ip saddr @app_nets drop
add rule ${TABLE} forward ip saddr @app_nets ip daddr 169.254.0.0/16 drop
`;

const IPV4 = /^(\d{1,3})(\.\d{1,3}){3}$/;
const IPV4_SUBNET = /^(\d{1,3})(\.\d{1,3}){3}\/\d{1,2}$/;

let ruleset: Promise<void> | null = null;
let warned = false;

/** Runs an nft script given on standard input. */
function nftScript(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('nft', ['-f', '-'], { timeout: 10_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`nft: ${String(stderr).trim() || error.message}`)) : resolve(),
    );
    child.stdin?.end(script);
  });
}

/**
 * Confines `network`'s containers (idempotent). Resolves true when the rules are in place, false when this host
 * cannot set them (logged once); an IPv6 subnet is not confined (app networks are created IPv4 only).
 */
export async function confineAppNetwork(network: NetworkAddresses): Promise<boolean> {
  const subnets = network.subnets.filter((subnet) => IPV4_SUBNET.test(subnet));
  const gateways = network.gateways.filter((gateway) => IPV4.test(gateway));
  if (subnets.length === 0) return false;
  try {
    ruleset ??= nftScript(RULESET).catch((error: unknown) => {
      ruleset = null;
      throw error;
    });
    await ruleset;
    const elements = [`add element ${TABLE} app_nets { ${subnets.join(', ')} }`];
    if (gateways.length > 0) elements.push(`add element ${TABLE} app_gateways { ${gateways.join(', ')} }`);
    await nftScript(`${elements.join('\n')}\n`);
    return true;
  } catch (error) {
    if (!warned) {
      warned = true;
      logger.warn(
        { err: error },
        'app containers are not confined: host services on 0.0.0.0 and 169.254.169.254 stay reachable from them (needs root and nft)',
      );
    }
    return false;
  }
}

/** Lets the subnets of a removed network go (another network may get them next); missing elements are no error. */
export async function releaseAppNetwork(network: NetworkAddresses): Promise<void> {
  const subnets = network.subnets.filter((subnet) => IPV4_SUBNET.test(subnet));
  const gateways = network.gateways.filter((gateway) => IPV4.test(gateway));
  for (const [set, values] of [
    ['app_nets', subnets],
    ['app_gateways', gateways],
  ] as const) {
    for (const value of values) await nftScript(`delete element ${TABLE} ${set} { ${value} }\n`).catch(() => undefined);
  }
}
