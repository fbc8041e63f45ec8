/**
 * The `webhook` of a run: one JSON POST of the finished run (with its final values) to the URL the client gave. The
 * URL is the client's choice, so the request goes through the outbound address policy: loopback, link-local and
 * metadata addresses are refused, private ranges only when the operator allows them (`GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS`).
 */
import net from 'node:net';
import { postForm } from '../../net/formPost';
import { guardedLookup, isRefusedAddress, RefusedDestinationError } from '../../net/outboundPolicy';
import type { Run } from '../storage/runStore';
import { toWireJson } from '../execution/serialize';

export type WebhookDestinations = 'public' | 'private' | 'any';

const TIMEOUT_MS = 10_000;

/** A deliverer for runs' webhooks under the given destination policy. */
export function webhookDeliverer(destinations: WebhookDestinations) {
  const allowPrivate = destinations !== 'public';
  return async (url: string, run: Run, values: unknown): Promise<void> => {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`webhook scheme ${parsed.protocol} refused`);
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    if (destinations !== 'any' && net.isIP(host) && isRefusedAddress(host, allowPrivate)) throw new RefusedDestinationError(host);
    const answer = await postForm(url, {
      headers: { 'content-type': 'application/json' },
      body: toWireJson({ ...run, values }),
      timeoutMs: TIMEOUT_MS,
      maxChars: 1_000,
      ...(destinations === 'any' ? {} : { lookup: guardedLookup(allowPrivate) }),
    });
    if (answer.status >= 400) throw new Error(`webhook answered ${answer.status}`);
  };
}
