/** Stops the shared Temporal dev server and drops the run's database: a test run leaves no process behind. */
import fs from 'node:fs';
import { Client as PgClient } from 'pg';
import type { TemporalDevServer } from '../../src/temporal/devServer';

export default async function globalTeardown(): Promise<void> {
  const temporal = (globalThis as Record<string, unknown>).__graphxTemporal as TemporalDevServer | undefined;
  await temporal?.stop();
  const admin = new PgClient({ connectionString: process.env.GRAPHX_TEST_PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${process.env.GRAPHX_TEST_DATABASE_NAME}" WITH (FORCE)`);
  // Per-deployment databases the tests provisioned carry the run's database name as a prefix.
  const leftovers = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`gx_%`]);
  void leftovers;
  await admin.end();
  if (process.env.GRAPHX_TEST_RUN_DIR && !process.env.GRAPHX_KEEP_TEST_DATA) {
    fs.rmSync(process.env.GRAPHX_TEST_RUN_DIR, { recursive: true, force: true });
  }
}
