/**
 * Stops the shared Temporal dev server and drops the run's database and every deployment database (and role) the
 * run's pipelines provisioned but did not delete: a test run leaves no process and no database behind.
 */
import fs from 'node:fs';
import { Client as PgClient } from 'pg';
import type { TemporalDevServer } from '../../src/temporal/devServer';

/** Deployment databases recorded in the run's own database (other runs' are left alone). */
async function deploymentDatabasesOfRun(runDatabaseUrl: string): Promise<string[]> {
  const client = new PgClient({ connectionString: runDatabaseUrl });
  await client.connect();
  try {
    const result = await client.query(`SELECT DISTINCT database_name FROM deployments WHERE database_name LIKE 'gx\\_%'`);
    return result.rows.map((row) => row.database_name as string);
  } catch {
    return [];
  } finally {
    await client.end();
  }
}

export default async function globalTeardown(): Promise<void> {
  const temporal = (globalThis as Record<string, unknown>).__graphxTemporal as TemporalDevServer | undefined;
  await temporal?.stop();
  const adminUrl = process.env.GRAPHX_TEST_PG_ADMIN_URL as string;
  const runDatabase = process.env.GRAPHX_TEST_DATABASE_NAME as string;
  const leftovers = await deploymentDatabasesOfRun(process.env.GRAPHX_TEST_DATABASE_URL as string);
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  for (const name of leftovers) {
    // Names come from our own gx_<hex> scheme; quoting guards against anything else.
    const ident = `"${name.replace(/"/g, '""')}"`;
    await admin.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${ident}`).catch(() => undefined);
  }
  await admin.query(`DROP DATABASE IF EXISTS "${runDatabase}" WITH (FORCE)`);
  await admin.end();
  if (process.env.GRAPHX_TEST_RUN_DIR && !process.env.GRAPHX_KEEP_TEST_DATA) {
    fs.rmSync(process.env.GRAPHX_TEST_RUN_DIR, { recursive: true, force: true });
  }
}
