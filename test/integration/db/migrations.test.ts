import { Client as PgClient } from 'pg';
import { createDb, migrationConfig } from '../../../src/db/knex';

describe('database migrations', () => {
  const databaseName = `graphx_migrations_${process.pid}_${Date.now().toString(36)}`;
  const adminUrl = process.env.GRAPHX_TEST_PG_ADMIN_URL as string;

  beforeAll(async () => {
    const admin = new PgClient({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    await admin.end();
  });
  afterAll(async () => {
    const admin = new PgClient({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('migrate up creates every table, down removes them all, and up again works', async () => {
    const db = createDb(adminUrl.replace(/\/[^/]*$/, `/${databaseName}`), 2);
    const tables = async () =>
      (await db.raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%'`)).rows
        .map((row: { tablename: string }) => row.tablename)
        .sort();
    try {
      await db.migrate.latest(migrationConfig);
      expect(await tables()).toEqual(
        expect.arrayContaining([
          'tenants',
          'api_keys',
          'deployments',
          'revisions',
          'tracing_projects',
          'pipeline_outbox',
          'oauth_providers',
        ]),
      );
      const comment = await db.raw(`SELECT obj_description('deployments'::regclass) AS comment`);
      expect(comment.rows[0].comment).toMatch(/deployed agent server/);
      await db.migrate.rollback(migrationConfig, true);
      expect(await tables()).toEqual([]);
      await db.migrate.latest(migrationConfig);
      expect((await tables()).length).toBeGreaterThan(5);
    } finally {
      await db.destroy();
    }
  });
});
