/**
 * Where a clone may connect (src/net/outboundPolicy.ts): outside the embedded stack a tenant's `repo_url` must not
 * make our worker fetch from loopback, link-local (cloud metadata) or, unless allowed, private addresses. git resolves
 * names itself, so the addresses judged here are pinned for it (`http.curloptResolve`) and redirects are not followed:
 * what git connects to is exactly what was checked.
 */
import { ApplicationFailure } from '@temporalio/activity';
import net from 'node:net';
import type { GraphxConfig } from '../../src/config';
import { isRefusedAddress, resolveUrlHost } from '@graphx/kit/net/outboundPolicy';

/**
 * The git configuration entries that pin the clone to the checked addresses; none when local repositories are allowed
 * (tests, embedded stack) or the name does not resolve (git then reports that itself).
 * @throws ApplicationFailure CloneFailed (non-retryable) when the host resolves to a refused address.
 */
export async function cloneDestinationConfig(
  repoUrl: string,
  shown: string,
  config: Pick<GraphxConfig, 'allowFileRepos' | 'allowPrivateNetwork'>,
): Promise<Array<[string, string]>> {
  if (config.allowFileRepos) return [];
  const resolved = await resolveUrlHost(repoUrl);
  if (!resolved) return [];
  const { host, addresses } = resolved;
  const refused = addresses.find((address) => isRefusedAddress(address, config.allowPrivateNetwork));
  if (refused) {
    const hint = isRefusedAddress(refused, true) ? '' : ' (private networks are allowed with GRAPHX_ALLOW_PRIVATE_NETWORK=1)';
    throw ApplicationFailure.nonRetryable(
      `Repository URL ${shown} resolves to ${refused}, an address the control plane does not clone from${hint}.`,
      'CloneFailed',
    );
  }
  const noRedirects: [string, string] = ['http.followRedirects', 'false'];
  if (net.isIP(host)) return [noRedirects];
  const port = new URL(repoUrl).port || '443';
  const pinned = addresses.map((address) => (net.isIPv6(address) ? `[${address}]` : address)).join(',');
  return [['http.curloptResolve', `${host}:${port}:${pinned}`], noRedirects];
}
