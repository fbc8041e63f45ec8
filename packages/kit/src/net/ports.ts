/** Port helpers for the embedded stack and the local target. */
import net from 'node:net';

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls `check` until it resolves true or `timeoutMs` passes. */
/** Thrown by a `waitFor` check when waiting longer cannot help (the process being waited for has exited). */
export class StopWaiting extends Error {}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ready = await check().catch((error: unknown) => {
      if (error instanceof StopWaiting) throw error;
      return false;
    });
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
}
