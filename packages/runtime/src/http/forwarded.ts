/**
 * Where the client reached this app: behind graphx's gateway the app's own host and path are not the client's. The
 * gateway sets `X-Forwarded-Prefix` (`/<deployment>`, none when it routed by the deployment's custom_url host),
 * `X-Forwarded-Host` and `X-Forwarded-Proto` (its public URL's, GRAPHX_GATEWAY_PUBLIC_URL), replacing whatever the
 * client sent, so links and `Content-Location` headers the app answers with work from where the client is.
 */
import type Koa from 'koa';

const PREFIX = /^(\/[A-Za-z0-9._~-]+)+$/;
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The path the gateway strips (`/<deployment>`), or '' (reached directly, or by host). */
export function forwardedPrefix(ctx: Koa.Context): string {
  const prefix = ctx.get('x-forwarded-prefix');
  return PREFIX.test(prefix) ? prefix : '';
}

/**
 * The base URL of this app as its client sees it: `<proto>://<host><prefix>`, or protocol-relative (`//host…`) when
 * the scheme is not known and the host is not a local one (the page's own scheme then applies, as the anchor does).
 */
export function publicBase(ctx: Koa.Context): string {
  const forwardedHost = ctx.get('x-forwarded-host');
  const host = HOST.test(forwardedHost) ? forwardedHost : ctx.get('host');
  const proto = ctx.get('x-forwarded-proto');
  const local = /^(localhost|127\.0\.0\.1|\[::1\])(:|$)/.test(host);
  const scheme = proto === 'http' || proto === 'https' ? `${proto}:` : local ? 'http:' : '';
  return `${scheme}//${host}${forwardedPrefix(ctx)}`;
}
