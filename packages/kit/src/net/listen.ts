/** Listening on a port and closing again, as every server of ours does it. */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** `http://<host>:<port>` with the port the server got (0 asks for a free one). */
  url: string;
  port: number;
  /** Stops accepting, ends every open connection (streams included) and resolves once the server closed. */
  close: () => Promise<void>;
}

/** Listens on `host:port`; rejects when the port cannot be had (EADDRINUSE and the like). */
export async function listen(server: http.Server, port: number, host: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
