/**
 * The only two host services an app container reaches, as unix sockets in a per-deployment directory bind-mounted at
 * /run/graphx (the container's network has no route to the host's loopback, where PostgreSQL, Temporal and the API
 * listen):
 * - `.s.PGSQL.5432`: a forwarder to the control plane's PostgreSQL that reads the startup packet and lets through only
 *   the deployment's own role to its own database (whatever pg_hba says: a machine's server may trust local users);
 * - `api.sock`: an HTTP forwarder to the control-plane API that passes `/internal/` paths only (what the runtime
 *   calls with its service token).
 * The forwarders live in the process running the container target; a restarted worker listens again on the same
 * paths (the directory, not the socket file, is mounted, so the new socket is what the container sees).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { logger } from '@graphx/kit/logger';

/** Where the directory is mounted in the container, and the names in it. */
export const CONTAINER_SOCKET_DIR = '/run/graphx';
export const PG_SOCKET_NAME = '.s.PGSQL.5432';
export const API_SOCKET_NAME = 'api.sock';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const MAX_STARTUP_BYTES = 10_000;

export interface DeploymentSocketTargets {
  /** TCP address of the control plane's PostgreSQL. */
  postgres: { host: string; port: number };
  /** Base URL of the control-plane API (http). */
  controlPlaneUrl: () => string;
}

/** sockaddr_un holds 108 bytes: the directories live under the OS temp dir, named by a hash of the data dir. */
export function socketRoot(dataDir: string): string {
  const digest = crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `graphx-sockets-${digest}`);
}

export class DeploymentSockets {
  private readonly servers = new Map<string, net.Server[]>();

  constructor(
    private readonly root: string,
    private readonly targets: DeploymentSocketTargets,
  ) {}

  /** The deployment's socket directory with both forwarders listening (idempotent). */
  async ensure(deploymentId: string, role: string): Promise<string> {
    const dir = path.join(this.root, deploymentId.replace(/-/g, ''));
    if (this.servers.has(deploymentId)) return dir;
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    const servers = [
      await listen(path.join(dir, PG_SOCKET_NAME), (socket) => this.forwardPostgres(socket, role)),
      await listenHttp(path.join(dir, API_SOCKET_NAME), (req, res) => this.forwardApi(req, res)),
    ];
    this.servers.set(deploymentId, servers);
    return dir;
  }

  /** Stops the forwarders of a deployment and removes its directory. */
  async remove(deploymentId: string): Promise<void> {
    this.closeServers(deploymentId);
    fs.rmSync(path.join(this.root, deploymentId.replace(/-/g, '')), { recursive: true, force: true });
  }

  /** Stops listening (the directories stay for a restarted worker). */
  async close(): Promise<void> {
    for (const id of [...this.servers.keys()]) this.closeServers(id);
  }

  private closeServers(deploymentId: string): void {
    const servers = this.servers.get(deploymentId) ?? [];
    this.servers.delete(deploymentId);
    // Not waiting for open connections to end: they belong to containers being stopped (or already gone).
    for (const server of servers) server.close();
  }

  private forwardPostgres(client: net.Socket, role: string): void {
    client.on('error', () => {});
    readStartup(client)
      .then((startup) => {
        if (!startup) return;
        if (startup.kind === 'startup' && (startup.user !== role || (startup.database ?? startup.user) !== role)) {
          client.end(postgresError(`graphx: this app may connect only as role ${role} to database ${role}`));
          return;
        }
        const upstream = net.connect(this.targets.postgres);
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        upstream.write(startup.packet);
        if (startup.rest.length > 0) upstream.write(startup.rest);
        client.pipe(upstream);
        upstream.pipe(client);
      })
      .catch(() => client.destroy());
  }

  private forwardApi(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (!req.url?.startsWith('/internal/')) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Only the internal API is reachable from an app.' }));
      return;
    }
    const base = new URL(this.targets.controlPlaneUrl());
    const upstream = http.request(
      {
        host: base.hostname,
        port: base.port || 80,
        path: `${base.pathname.replace(/\/+$/, '')}${req.url}`,
        method: req.method,
        headers: { ...req.headers, host: base.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'The control plane could not be reached.' }));
    });
    req.pipe(upstream);
  }
}

type Startup =
  | { kind: 'startup'; user: string | null; database: string | null; packet: Buffer; rest: Buffer }
  | { kind: 'cancel'; user: null; database: null; packet: Buffer; rest: Buffer };

/**
 * Reads the client's first packet; an SSL or GSS encryption request is answered "no" (a local socket) and the next
 * packet read. Resolves null when the client went away.
 */
function readStartup(socket: net.Socket): Promise<Startup | null> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP_BYTES) return finish(new Error('bad startup packet'));
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        const packet = buffered.subarray(0, length);
        const rest = buffered.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          socket.write('N');
          buffered = Buffer.from(rest);
          continue;
        }
        if (code === CANCEL_REQUEST) return finish(null, { kind: 'cancel', user: null, database: null, packet, rest });
        if (code !== PROTOCOL_3) return finish(new Error('unsupported protocol'));
        const params = parseParams(packet.subarray(8));
        return finish(null, { kind: 'startup', user: params.user ?? null, database: params.database ?? null, packet, rest });
      }
    };
    const onEnd = () => finish(null, null);
    const finish = (error: Error | null, value: Startup | null = null) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.pause();
      if (error) reject(error);
      else resolve(value);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
  });
}

function parseParams(body: Buffer): Record<string, string> {
  const parts = body.toString('utf8').split('\0');
  const params: Record<string, string> = {};
  for (let i = 0; i + 1 < parts.length && parts[i] !== ''; i += 2) params[parts[i] as string] = parts[i + 1] as string;
  return params;
}

/** An ErrorResponse (FATAL, invalid authorization) the client library shows as the connection error. */
function postgresError(message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C28000\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}

/** Listens on a unix socket any container user may connect to; a stale file left by a dead process is replaced. */
async function listen(socketPath: string, onConnection: (socket: net.Socket) => void): Promise<net.Server> {
  return bind(net.createServer(onConnection), socketPath);
}

async function listenHttp(socketPath: string, handler: http.RequestListener): Promise<net.Server> {
  return bind(http.createServer(handler), socketPath);
}

async function bind(server: net.Server, socketPath: string): Promise<net.Server> {
  fs.rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  server.on('error', (error) => logger.warn({ err: error, socketPath }, 'socket forwarder error'));
  fs.chmodSync(socketPath, 0o666);
  return server;
}
