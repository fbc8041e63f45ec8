import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { registryAllowed, startRegistryProxy } from '../../src/containers/buildEgress';

describe("the build proxy's registry allowlist", () => {
  const allowed = ['registry.npmjs.org', '.pkg.example.com'];

  it('allows a listed host, any case, and the subdomains of a leading-dot entry', () => {
    expect(registryAllowed('registry.npmjs.org', allowed)).toBe(true);
    expect(registryAllowed('Registry.NPMJS.org', allowed)).toBe(true);
    expect(registryAllowed('npm.pkg.example.com', allowed)).toBe(true);
  });

  it('refuses look-alikes, other hosts and addresses', () => {
    expect(registryAllowed('registry.npmjs.org.evil.com', allowed)).toBe(false);
    expect(registryAllowed('evilregistry.npmjs.org', allowed)).toBe(false);
    expect(registryAllowed('pkg.example.com', allowed)).toBe(false);
    expect(registryAllowed('10.88.0.1', allowed)).toBe(false);
    expect(registryAllowed('169.254.169.254', allowed)).toBe(false);
  });
});

describe("the build proxy's tunnels", () => {
  /** A registry stand-in that never closes a connection on its own, even after the client's FIN (half-open). */
  async function silentUpstream(): Promise<{ port: number; close: () => void }> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer({ allowHalfOpen: true }, (socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as net.AddressInfo).port,
      close: () => {
        for (const socket of sockets) socket.destroy();
        server.close();
      },
    };
  }

  /** Opens a CONNECT tunnel through the proxy's unix socket, as the relay in the build's namespace does. */
  async function openTunnel(socketPath: string, port: number): Promise<net.Socket> {
    const client = net.connect(socketPath);
    client.on('error', () => undefined);
    client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const answer = await new Promise<string>((resolve) => client.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    return client;
  }

  const settlesWithin = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => 'settled'), new Promise((resolve) => setTimeout(() => resolve('still waiting'), ms))]);

  it('closes at once after an install whose keep-alive tunnel idled past the upstream timeout (the yarn starter hang)', async () => {
    const upstream = await silentUpstream();
    const socketPath = path.join(os.tmpdir(), `graphx-proxy-test-${process.pid}-1.sock`);
    const proxy = await startRegistryProxy(socketPath, ['127.0.0.1'], { upstreamPort: upstream.port, idleMs: 200 });
    try {
      const client = await openTunnel(socketPath, upstream.port);
      await new Promise((resolve) => setTimeout(resolve, 600));
      // The install ends: its connection goes away while the registry side was already dropped for idling.
      client.end();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await settlesWithin(proxy.close(), 3000)).toBe('settled');
    } finally {
      upstream.close();
    }
  });

  it('closes at once while a tunnel is still open and both ends are silent', async () => {
    const upstream = await silentUpstream();
    const socketPath = path.join(os.tmpdir(), `graphx-proxy-test-${process.pid}-2.sock`);
    const proxy = await startRegistryProxy(socketPath, ['127.0.0.1'], { upstreamPort: upstream.port, idleMs: 60_000 });
    try {
      const client = await openTunnel(socketPath, upstream.port);
      expect(await settlesWithin(proxy.close(), 3000)).toBe('settled');
      await new Promise((resolve) => client.once('close', resolve));
    } finally {
      upstream.close();
    }
  });
});
