/**
 * One PostgreSQL database and role per deployment, on the control plane's own server. Names derive from the
 * deployment id and the password from the secret key (`SecretBox.sign`), so nothing about them needs storing and a
 * restarted instance gets the same URI.
 */
import { Client as PgClient } from 'pg';
import type { GraphxConfig } from '../config';
import type { Db } from '../db/knex';
import { logger } from '@graphx/kit/logger';
import type { SecretBox } from '../security/secretBox';

/** Database and role name of a deployment: `gx_` + the id's hex digits (identifier-safe, under 63 bytes). */
export function deploymentDatabaseName(deploymentId: string): string {
  const hex = deploymentId.toLowerCase().replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`Not a deployment id: ${deploymentId}`);
  return `gx_${hex}`;
}

/** The role's password: an HMAC of the id under the secret key (base64url, so it needs no quoting beyond ''). */
export function deploymentDatabasePassword(secretBox: SecretBox, deploymentId: string): string {
  return secretBox.sign(`deployment-database:${deploymentId}`);
}

/** The control plane's own connection string: DATABASE_URL, else the one the pool was opened with (embedded). */
export function controlPlaneDatabaseUrl(config: GraphxConfig, db: Db): string {
  if (config.databaseUrl) return config.databaseUrl;
  const connection = (db.client as { config: { connection?: unknown } }).config.connection;
  if (typeof connection === 'string') return connection;
  const c = (connection ?? {}) as { host?: string; port?: number; user?: string; password?: string; database?: string };
  const auth = c.user ? `${encodeURIComponent(c.user)}${c.password ? `:${encodeURIComponent(c.password)}` : ''}@` : '';
  return `postgres://${auth}${c.host ?? '127.0.0.1'}:${c.port ?? 5432}/${c.database ?? 'postgres'}`;
}

/** `DATABASE_URI` of the deployment's app: same server as the control plane, its own role and database. */
export function deploymentDatabaseUri(config: GraphxConfig, db: Db, secretBox: SecretBox, deploymentId: string): string {
  const url = new URL(controlPlaneDatabaseUrl(config, db));
  const name = deploymentDatabaseName(deploymentId);
  url.username = name;
  url.password = deploymentDatabasePassword(secretBox, deploymentId);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Creates the role and database unless they exist (two concurrent runs are fine: the loser sees "already exists").
 * Re-sets the password each time, so a changed secret key heals instead of locking the app out.
 */
export async function ensureDeploymentDatabase(db: Db, secretBox: SecretBox, deploymentId: string): Promise<string> {
  const name = deploymentDatabaseName(deploymentId);
  const password = deploymentDatabasePassword(secretBox, deploymentId);
  const role = await db.raw('SELECT 1 FROM pg_roles WHERE rolname = ?', [name]);
  if (role.rows.length === 0) {
    await ignoreCode('42710', () => withoutSecret(password, () => db.raw(`CREATE ROLE "${name}" LOGIN PASSWORD '${password}'`)));
  }
  await withoutSecret(password, () =>
    db.raw(`ALTER ROLE "${name}" LOGIN PASSWORD '${password}' CONNECTION LIMIT ${DEPLOYMENT_ROLE_CONNECTION_LIMIT}`),
  );
  // A runaway (or hostile) query of one app must not hold the shared server's CPU and locks for long.
  await db.raw(`ALTER ROLE "${name}" SET statement_timeout = '${DEPLOYMENT_ROLE_STATEMENT_TIMEOUT}'`);
  const database = await db.raw('SELECT 1 FROM pg_database WHERE datname = ?', [name]);
  if (database.rows.length === 0) {
    // CREATE DATABASE cannot run inside a transaction block; knex runs a bare raw query outside one.
    await ignoreCode('42P04', () => db.raw(`CREATE DATABASE "${name}" OWNER "${name}"`));
  }
  // Other deployments' roles must not connect to this one's data.
  await db.raw(`REVOKE ALL ON DATABASE "${name}" FROM PUBLIC`);
  await db.raw(`GRANT ALL ON DATABASE "${name}" TO "${name}"`);
  await closeControlPlaneDatabase(db);
  return name;
}

/** Connections one app's role may hold at once (its replicas' pools together), so it cannot starve the others. */
export const DEPLOYMENT_ROLE_CONNECTION_LIMIT = 40;
export const DEPLOYMENT_ROLE_STATEMENT_TIMEOUT = '5min';

/**
 * Deployment roles must not even connect to the control plane's database (PostgreSQL grants CONNECT to PUBLIC by
 * default): CONNECT is kept for the control plane's own user and taken from PUBLIC. A control plane that does not
 * own its database cannot change that; it logs and goes on, as before.
 */
async function closeControlPlaneDatabase(db: Db): Promise<void> {
  const { rows } = await db.raw('SELECT current_database() AS name, current_user AS "user"');
  const { name, user } = rows[0] as { name: string; user: string };
  try {
    await db.raw('GRANT CONNECT ON DATABASE ?? TO ??', [name, user]);
    await db.raw('REVOKE CONNECT ON DATABASE ?? FROM PUBLIC', [name]);
  } catch (error) {
    logger.warn(
      { database: name, err: (error as Error).message },
      'cannot revoke CONNECT on the control-plane database from PUBLIC',
    );
  }
}

/** Drops the database (closing its connections) and the role; both may already be gone. */
export async function dropDeploymentDatabase(db: Db, deploymentId: string): Promise<void> {
  const name = deploymentDatabaseName(deploymentId);
  await db.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await db.raw(`DROP ROLE IF EXISTS "${name}"`);
}

/** True when the deployment's database exists. */
export async function deploymentDatabaseExists(db: Db, deploymentId: string): Promise<boolean> {
  const result = await db.raw('SELECT 1 FROM pg_database WHERE datname = ?', [deploymentDatabaseName(deploymentId)]);
  return result.rows.length > 0;
}

async function ignoreCode(code: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if ((error as { code?: string }).code !== code) throw error;
  }
}

/** knex puts the SQL text in its error messages: strip the password before the error travels anywhere. */
async function withoutSecret<T>(secret: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const cleaned = new Error(
      String((error as Error).message)
        .split(secret)
        .join('********'),
    );
    (cleaned as { code?: string }).code = (error as { code?: string }).code;
    throw cleaned;
  }
}

/**
 * On a cluster graphx owns (the embedded one), deployment roles must not connect to the maintenance databases either
 * (CONNECT to `postgres` and `template1` is PUBLIC's by default): the superuser keeps it. Never run on a server graphx
 * shares with others (DATABASE_URL), where those databases are their administrator's to decide.
 */
export async function closeMaintenanceDatabases(superuserUrl: string): Promise<void> {
  const client = new PgClient({ connectionString: superuserUrl });
  await client.connect();
  try {
    await client.query('REVOKE CONNECT ON DATABASE postgres, template1 FROM PUBLIC');
  } finally {
    await client.end();
  }
}
