/**
 * Where a gateway request goes (a deployment, by path or by its custom_url host) and the headers the instance gets.
 */
import type http from 'node:http';
import type { Route, RouteTable } from './routeTable';

const NAME_AND_REST = /^\/([a-z][a-z0-9-]{0,62})(?=\/|\?|$)(.*)$/;
/** Forwarded headers the gateway sets itself: a client's own are dropped, not passed along beside ours. */
const FORWARDED = new Set(['x-forwarded-prefix', 'x-forwarded-host', 'x-forwarded-proto']);
/** An instance's metrics name its assistants and volumes: for the operator's scraper, never through the gateway. */
export const INSTANCE_ONLY_PATHS = /^\/metrics\/?(\?|$)/;
/** Hosts that are the gateway itself, never a deployment's custom_url. */
const LOCAL_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|::1|0\.0\.0\.0)$/;

/** Where a request goes: a deployment (by path, or by its custom_url host) and what the app is told about it. */
export interface Destination {
  route: Route;
  name: string;
  upstreamPath: string;
  forwarded: { prefix: string; host: string; proto: string };
  reread: () => Promise<Route>;
}

/** What one attempt on an instance came to: `retry` when nothing was delivered, so another instance may be tried. */
export type AttemptOutcome = 'done' | 'retry' | 'fail';

/** Instances tried for one request before the gateway gives up (a rollout may have just stopped the one picked). */
const MAX_ATTEMPTS = 6;

/**
 * Tries the destination's instances in turn: an instance that failed is not picked again, and once every known one
 * failed the route is reread after a short wait (during a switch the new route appears within the rollout's settle
 * time). `no-instance` when the route has none; `failed` when the attempts ran out or one said `fail`.
 */
export async function tryInstances(
  routes: RouteTable,
  target: Destination,
  attempt: (port: number) => Promise<AttemptOutcome>,
): Promise<'done' | 'no-instance' | 'failed'> {
  const failed = new Set<number>();
  let route = target.route;
  for (let index = 0; index < MAX_ATTEMPTS; index += 1) {
    let port = routes.pick(target.name, route, failed);
    if (port === null && index > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100 * index));
      route = await target.reread();
      failed.clear();
      port = routes.pick(target.name, route, failed);
    }
    if (port === null) return 'no-instance';
    const outcome = await attempt(port);
    if (outcome === 'done') return 'done';
    failed.add(port);
    if (outcome === 'fail') break;
    route = await target.reread();
  }
  return 'failed';
}

export async function destination(
  routes: RouteTable,
  req: http.IncomingMessage,
  publicUrl: URL | null,
): Promise<Destination | null> {
  const hostHeader = req.headers.host ?? '';
  const hostname = hostHeader.replace(/:\d+$/, '').toLowerCase();
  if (hostname && !LOCAL_HOST.test(hostname) && hostname !== publicUrl?.hostname) {
    const route = await routes.getByHost(hostname);
    if (route.exists) {
      return {
        route,
        name: route.name,
        upstreamPath: req.url ?? '/',
        forwarded: { prefix: '', host: hostHeader, proto: route.scheme ?? 'http' },
        reread: () => routes.getByHost(hostname, true),
      };
    }
  }
  const match = NAME_AND_REST.exec(req.url ?? '');
  if (!match) return null;
  const name = match[1] as string;
  const rest = match[2] ?? '';
  return {
    route: await routes.get(name),
    name,
    upstreamPath: rest.startsWith('/') ? rest : `/${rest}`,
    forwarded: {
      prefix: `/${name}`,
      host: publicUrl?.host ?? hostHeader,
      proto: publicUrl ? publicUrl.protocol.replace(':', '') : 'http',
    },
    reread: () => routes.get(name, true),
  };
}

/**
 * The request's headers as the instance gets them: the client's own without the forwarded headers the gateway sets
 * itself (FORWARDED), then the gateway's prefix, host, protocol and the client's address.
 */
export function upstreamHeaders(req: http.IncomingMessage, port: number, forwarded: Destination['forwarded']): string[] {
  const headers = headersWithout(req.rawHeaders, FORWARDED);
  if (forwarded.prefix) headers.push('X-Forwarded-Prefix', forwarded.prefix);
  if (forwarded.host) headers.push('X-Forwarded-Host', forwarded.host);
  headers.push('X-Forwarded-Proto', forwarded.proto, 'X-Forwarded-For', req.socket.remoteAddress ?? '');
  // HTTP/1.0 clients may omit Host, which node's HTTP/1.1 servers (the runtime) reject with 400.
  if (req.headers.host === undefined) headers.push('Host', `127.0.0.1:${port}`);
  return headers;
}

/** Raw headers (name, value, name, value…) without the names in `dropped` (lower case), in their order and case. */
export function headersWithout(rawHeaders: string[], dropped: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const key = rawHeaders[i] as string;
    if (!dropped.has(key.toLowerCase())) kept.push(key, rawHeaders[i + 1] as string);
  }
  return kept;
}
