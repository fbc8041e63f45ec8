/**
 * Requests Node's HTTP parser rejects before any middleware runs (a request line or headers over 16 KiB, a malformed
 * request) are answered here, in the same `{"detail": ...}` JSON as every other error, instead of Node's bare status.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';

const STATUS_BY_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
};

/** Installs the JSON `clientError` answer on `server` (the API, the runtime and the gateway all use it). */
export function answerClientErrorsWithJson(server: http.Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = STATUS_BY_CODE[error.code ?? ''] ?? 400;
    const body = JSON.stringify({ detail: http.STATUS_CODES[status] ?? 'Bad Request' });
    // The answer to HEAD has the headers of a body but none (a client reads any bytes after them as garbage).
    const rawPacket = (error as { rawPacket?: Buffer }).rawPacket;
    const head = rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  });
}
