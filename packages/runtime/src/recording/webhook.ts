/**
 * The `webhook` of a run: one JSON POST of the finished run (with its final values) to the URL the client gave. The
 * URL is the client's choice, so the request goes through the outbound address policy: loopback, link-local and
 * metadata addresses are refused, private ranges only when the operator allows them (`GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS`).
 * A path (`/hooks/done`), as the anchor's JS server allows, is posted to the app's own server (its `http.app`
 * routes); being a loopback destination, only where loopback is allowed (`any`, the default of `graphx dev`): the
 * anchor's Python server denies such webhooks by default since they let a caller drive the app's own routes.
 */
import net from 'node:net';
import { postForm } from '@graphx/kit/net/formPost';
import { guardedLookup, isRefusedAddress, RefusedDestinationError } from '@graphx/kit/net/outboundPolicy';
import type { Run } from '../storage/runStore';
import { toWireJson } from '../execution/serialize';
import { loopbackFetch } from '../http/loopback';

export type WebhookDestinations = 'public' | 'private' | 'any';

const TIMEOUT_MS = 10_000;

/** A deliverer for runs' webhooks under the given destination policy. */
export function webhookDeliverer(destinations: WebhookDestinations) {
  const allowPrivate = destinations !== 'public';
  return async (url: string, run: Run, values: unknown): Promise<void> => {
    if (url.startsWith('/')) {
      if (destinations !== 'any') {
        throw new Error('a webhook path posts to the app itself: refused unless GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS=any');
      }
      const answer = await loopbackFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: toWireJson({ ...run, values }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      await answer.body?.cancel();
      if (answer.status >= 400) throw new Error(`webhook answered ${answer.status}`);
      return;
    }
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
