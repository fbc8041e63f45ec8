/**
 * A WebSocket handshake goes through the same Koa stack as any request (request id, CORS, auth, the app's
 * authorization handler in the route), so a socket is opened only where a plain request would be answered. The
 * request gets a response object with no socket: a route that upgrades (protocolRoutes.ts) takes the raw socket and
 * answers nothing through it; any other answer (401, 403, 404, 422…) is written to the socket as a plain HTTP
 * response, which is what a WebSocket client reports as a failed handshake.
 */
import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { UPGRADE_KEY } from './routes/protocolRoutes';

export function passUpgradeThroughApp(
  handler: (req: IncomingMessage, res: http.ServerResponse) => unknown,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  socket.on('error', () => socket.destroy());
  (req as unknown as Record<symbol, unknown>)[UPGRADE_KEY] = { req, socket, head };
  const res = new http.ServerResponse(req);
  // The request log and metrics time a request until its response closes: for a socket, until the socket does.
  socket.once('close', () => res.emit('close'));
  const chunks: Buffer[] = [];
  const toBuffer = (chunk: unknown) => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  res.write = ((chunk: unknown) => {
    chunks.push(toBuffer(chunk));
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown) => {
    if (chunk !== undefined && typeof chunk !== 'function') chunks.push(toBuffer(chunk));
    const body = Buffer.concat(chunks);
    const status = res.statusCode;
    const headers = Object.entries(res.getHeaders())
      .filter(([name]) => !['content-length', 'connection', 'transfer-encoding'].includes(name))
      .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
    socket.end(
      [
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}`,
        ...headers,
        `content-length: ${body.length}`,
        'connection: close',
        '',
        '',
      ]
        .join('\r\n')
        .concat(body.toString('utf8')),
    );
    return res;
  }) as typeof res.end;
  void handler(req, res);
}
