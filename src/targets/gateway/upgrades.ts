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
import { destination, INSTANCE_ONLY_PATHS, tryInstances, upstreamHeaders, type Destination } from './destination';
import type { RouteTable } from './routeTable';

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
  if (!target.route.exists) return refuse(socket, 404, `Deployment ${target.name} not found.`);
  const result = await tryInstances(routes, target, async (port) => {
    if (socket.destroyed) return 'fail';
    const upstream = await connect(port);
    if (!upstream) return 'retry';
    splice(req, socket, head, upstream, port, target);
    return 'done';
  });
  if (result === 'done') return;
  if (result === 'no-instance') return refuse(socket, 503, `Deployment ${target.name} has no running instance.`);
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

const REASONS: Record<number, string> = { 404: 'Not Found', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/** A plain HTTP answer on the socket: what a WebSocket client reports as a failed handshake. */
function refuse(socket: Duplex, status: number, detail: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Gateway'}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
