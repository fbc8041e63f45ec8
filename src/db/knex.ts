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

/** Opens a pool on `connectionString`. */
export function createDb(connectionString: string, poolMax = 10): Db {
  return knexFactory({
    client: 'pg',
    connection: connectionString,
    pool: { min: 0, max: poolMax },
  });
}

/** Brings the schema to the newest migration. */
export async function migrateToLatest(db: Db): Promise<void> {
  await db.migrate.latest(migrationConfig);
}
