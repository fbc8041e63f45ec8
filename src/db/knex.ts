/** The knex connection and the migration runner. Migrations are listed in code so tsx, jest and tsc all find them. */
import knexFactory, { type Knex } from 'knex';
import { migrations } from './migrations';

export type Db = Knex;
/** Small operations take `DbOrTx`, so the caller owns the transaction. */
export type DbOrTx = Knex | Knex.Transaction;

class ListedMigrationSource implements Knex.MigrationSource<string> {
  getMigrations(): Promise<string[]> {
    return Promise.resolve(Object.keys(migrations).sort());
  }
  getMigrationName(name: string): string {
    return name;
  }
  getMigration(name: string): Promise<Knex.Migration> {
    const migration = migrations[name];
    if (!migration) throw new Error(`Unknown migration ${name}`);
    return Promise.resolve(migration);
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new ListedMigrationSource(),
  tableName: 'knex_migrations',
};

/**
 * Every connection of the pool plans named prepared statements (db/prepared.ts: the reads CI polls) once, generically.
 * PostgreSQL's default (`auto`) compares the generic plan's estimate with the first five custom plans; for the page of
 * revisions, whose LIMIT and OFFSET are parameters, it kept choosing custom plans, so every poll was planned again and
 * cost PostgreSQL twice the CPU of a one-row read (bench/controlplane: 104 against 44 µs per request, and the page at
 * 55-64 % of the bare lookup's req/s). Those statements are key lookups and one index-ordered page: their generic plans
 * are the plans wanted. Unnamed statements (knex's own queries) are planned per execution either way. A server
 * without the setting (PostgreSQL < 12) keeps its default.
 */
const GENERIC_PLANS = 'SET plan_cache_mode = force_generic_plan';
const UNDEFINED_PARAMETER = '42704';

type PgConnection = { query: (sql: string, callback: (error: (Error & { code?: string }) | null) => void) => void };

/** Opens a pool on `connectionString`. */
export function createDb(connectionString: string, poolMax = 10): Db {
  return knexFactory({
    client: 'pg',
    connection: connectionString,
    pool: {
      min: 0,
      max: poolMax,
      afterCreate: (connection: PgConnection, done: (error: Error | null, connection: PgConnection) => void) => {
        connection.query(GENERIC_PLANS, (error) => done(error && error.code !== UNDEFINED_PARAMETER ? error : null, connection));
      },
    },
  });
}

/** Brings the schema to the newest migration. */
export async function migrateToLatest(db: Db): Promise<void> {
  await db.migrate.latest(migrationConfig);
}
