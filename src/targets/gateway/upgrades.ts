/**
 * WebSocket handshakes through the gateway (the agent server's protocol-v2 transport): the handshake goes to one
 * serving instance as raw bytes — its request line with the deployment prefix stripped, the client's headers plus
 * the forwarded ones, as for any request — and then both directions are piped. The app answers the handshake itself
 * (101, or its 401/403/404), so its authentication and authorization decide exactly as for a plain request.
 */
import type http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { logger } from '@graphx/kit/logger';
import { destination, INSTANCE_ONLY_PATHS, upstreamHeaders, type Destination } from './destination';
import type { RouteTable } from './routeTable';

/** Instances tried before the handshake is refused (a rollout may have just stopped the one picked). */
const MAX_ATTEMPTS = 3;

export function passUpgrade(
  routes: RouteTable,
  req: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  publicUrl: URL | null,
): void {
  socket.on('error', () => socket.destroy());
  routeUpgrade(routes, req, socket, head, publicUrl).catch((error: unknown) => {
    logger.error({ err: error, component: 'gateway' }, 'the gateway could not route a WebSocket handshake');
    refuse(socket, 502, 'The deployment could not be reached.');
  });
}

async function routeUpgrade(
  routes: RouteTable,
  req: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  publicUrl: URL | null,
): Promise<void> {
  const target = await destination(routes, req, publicUrl);
  if (!target || INSTANCE_ONLY_PATHS.test(target.upstreamPath)) return refuse(socket, 404, 'Not found.');
  let route = target.route;
  if (!route.exists) return refuse(socket, 404, `Deployment ${target.name} not found.`);
  const failed = new Set<number>();
  for (let attempt = 0; attempt < MAX_ATTEMPTS && !socket.destroyed; attempt += 1) {
    const port = routes.pick(target.name, route, failed);
    if (port !== null) {
      const upstream = await connect(port);
      if (upstream) return splice(req, socket, head, upstream, port, target);
      failed.add(port);
    }
    await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
    route = await target.reread();
  }
  refuse(socket, 502, `Deployment ${target.name} did not answer.`);
}

/** A connection to the instance, or null when none could be made (nothing was sent, so another may be tried). */
function connect(port: number): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const upstream = net.connect(port, '127.0.0.1');
    upstream.once('connect', () => {
      upstream.removeAllListeners('error');
      resolve(upstream);
    });
    upstream.once('error', () => resolve(null));
  });
}

function splice(
  req: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  upstream: net.Socket,
  port: number,
  target: Destination,
): void {
  upstream.setNoDelay(true);
  const headers = upstreamHeaders(req, port, target.forwarded);
  const lines = [`${req.method ?? 'GET'} ${target.upstreamPath} HTTP/1.1`];
  for (let index = 0; index < headers.length; index += 2) lines.push(`${headers[index]}: ${headers[index + 1]}`);
  upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (head.length > 0) upstream.write(head);
  upstream.on('error', () => socket.destroy());
  upstream.on('close', () => socket.destroy());
  socket.on('close', () => upstream.destroy());
  socket.pipe(upstream).pipe(socket);
}

/** A plain HTTP answer on the socket: what a WebSocket client reports as a failed handshake. */
function refuse(socket: Duplex, status: number, detail: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Bad Gateway'}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
