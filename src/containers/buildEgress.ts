/**
 * The dependency install's only way out: an allowlisting HTTPS proxy. The install step is the one build step with
 * network, and its lifecycle scripts (`postinstall`) are tenant code; on the engine's bridge they would reach the
 * internet, the cloud metadata address and every host service bound to 0.0.0.0 (measured: the bridge gateway and the
 * host's own address both answer). So the step joins a network namespace of its own that holds only `lo`; inside it a
 * relay listens on 127.0.0.1:PROXY_PORT and hands each connection to a unix socket (a file: the same on both sides of
 * the namespace), where the worker's proxy accepts `CONNECT <registry>:443` for the allowed hosts and nothing else.
 * Package managers find it through the proxy variables written into the step's bind-mounted env file (not part of the
 * layer cache key). It needs `ip netns` (root) and an engine on this host that joins a namespace by path (podman);
 * elsewhere the install step uses the engine's bridge and the build log says so.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Where the proxy answers inside the install step's namespace. */
export const PROXY_PORT = 3128;

/** Registries the install step may reach unless GRAPHX_BUILD_REGISTRY_HOSTS says otherwise. */
export const DEFAULT_REGISTRY_HOSTS = [
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  'repo.yarnpkg.com',
  // The Python package index (its simple API and its files), for Python apps' dependencies.
  'pypi.org',
  'files.pythonhosted.org',
];

export interface BuildEgress {
  /** The network namespace (a path) the install step joins, or null: the engine's bridge. */
  namespacePath: string | null;
  /** `export …` lines for the step's env file: the proxy settings every package manager reads. */
  envLines: string;
  /** Why there is no namespace, when there is none. */
  unavailable: string | null;
  close: () => Promise<void>;
}

/** The relay run inside the namespace: 127.0.0.1:port → the proxy's unix socket. */
const RELAY = `const net = require('net'); const [socketPath, port] = process.argv.slice(1);
net.createServer((client) => { const upstream = net.connect(socketPath);
  client.on('error', () => upstream.destroy()); upstream.on('error', () => client.destroy());
  client.pipe(upstream); upstream.pipe(client); })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\\n'));`;

/** True when `host` is one of `allowed` (an entry starting with `.` allows its subdomains). */
export function registryAllowed(host: string, allowed: string[]): boolean {
  const name = host.toLowerCase();
  return allowed.some((entry) => (entry.startsWith('.') ? name.endsWith(entry) : name === entry.toLowerCase()));
}

/** Opens the install step's namespace, relay and proxy; on any failure returns the bridge fallback. */
export async function openBuildEgress(allowedHosts: string[]): Promise<BuildEgress> {
  const id = crypto.randomBytes(5).toString('hex');
  const namespace = `graphx-build-${id}`;
  const socketPath = path.join(os.tmpdir(), `graphx-egress-${id}.sock`);
  let proxy: RegistryProxy | null = null;
  let relay: ChildProcess | null = null;
  let namespaceMade = false;
  const close = async () => {
    relay?.kill('SIGKILL');
    await proxy?.close();
    if (namespaceMade) {
      try {
        execFileSync('ip', ['netns', 'delete', namespace], { stdio: 'ignore' });
      } catch {
        // Already gone.
      }
    }
    fs.rmSync(socketPath, { force: true });
  };
  try {
    execFileSync('ip', ['netns', 'add', namespace], { stdio: ['ignore', 'ignore', 'pipe'] });
    namespaceMade = true;
    execFileSync('ip', ['-n', namespace, 'link', 'set', 'lo', 'up'], { stdio: ['ignore', 'ignore', 'pipe'] });
    proxy = await startRegistryProxy(socketPath, allowedHosts);
    relay = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', RELAY, socketPath, String(PROXY_PORT)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await relayReady(relay);
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    const names = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'npm_config_https_proxy', 'npm_config_proxy'];
    const envLines = [...names, 'YARN_HTTPS_PROXY', 'YARN_HTTP_PROXY'].map((name) => `export ${name}='${url}'\n`).join('');
    return { namespacePath: `/run/netns/${namespace}`, envLines, unavailable: null, close };
  } catch (error) {
    await close();
    const reason = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    return { namespacePath: null, envLines: '', unavailable: reason, close: async () => {} };
  }
}

/** A running registry proxy. */
export interface RegistryProxy {
  /** Ends every tunnel and stops listening; resolves at once, whatever the tunnels' ends are doing. */
  close: () => Promise<void>;
}

export interface RegistryProxyOptions {
  /** The only port a tunnel may reach (443; tests point it at a local server). */
  upstreamPort?: number;
  /** A tunnel with no traffic either way for this long is ended (a package manager's idle keep-alive). */
  idleMs?: number;
}

/**
 * The allowlisting proxy on a unix socket: CONNECT to an allowed host's port 443, every other request 403. A tunnel is
 * one unit: when either end closes, ends or idles out, both are destroyed. (They used to be piped one way each: a
 * registry connection dropped for idling left the install's side half-open, and `server.close()`, which waits for
 * every connection, CONNECT tunnels included, never returned: the yarn starter's build stopped after its install.)
 */
export async function startRegistryProxy(
  socketPath: string,
  allowedHosts: string[],
  options: RegistryProxyOptions = {},
): Promise<RegistryProxy> {
  const upstreamPort = options.upstreamPort ?? 443;
  const idleMs = options.idleMs ?? 30_000;
  const tunnels = new Set<net.Socket>();
  const server = http.createServer((_request, response) => {
    response.writeHead(403, { 'content-type': 'text/plain' }).end('graphx builds reach only package registries (HTTPS)\n');
  });
  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = /^\[?([^\]]+?)\]?:(\d+)$/.exec(request.url ?? '');
    client.on('error', () => client.destroy());
    if (!target || target[2] !== String(upstreamPort) || !registryAllowed(target[1] as string, allowedHosts)) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = net.connect({ host: target[1] as string, port: upstreamPort });
    const end = () => {
      client.destroy();
      upstream.destroy();
      tunnels.delete(client);
      tunnels.delete(upstream);
    };
    tunnels.add(client);
    tunnels.add(upstream);
    for (const socket of [client, upstream]) {
      socket.setTimeout(idleMs, end);
      socket.once('close', end);
      socket.once('end', end);
      socket.on('error', end);
    }
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  });
  fs.rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  // Only this host's root (the engine's steps run as other users inside their namespace) may open it.
  fs.chmodSync(socketPath, 0o600);
  const close = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // closeAllConnections() leaves CONNECT tunnels alone (they are no longer HTTP connections): end them here.
    server.closeAllConnections();
    for (const socket of tunnels) socket.destroy();
    tunnels.clear();
    await closed;
  };
  return { close };
}

function relayReady(relay: ChildProcess, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`the egress relay did not start: ${stderr}`)), timeoutMs);
    relay.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    relay.stdout?.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
    relay.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the egress relay exited (${code}): ${stderr.trim()}`));
    });
  });
}
