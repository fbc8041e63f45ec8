/**
 * One real Temporal dev server (in memory, on a free port) and one fresh PostgreSQL database per test run, plus one
 * workflow bundle every test worker shares. Their addresses reach the tests through the environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { Client as PgClient } from 'pg';
import { createDb, migrateToLatest } from '../../src/db/knex';
import { findFreePort } from '@graphx/kit/net/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../../src/temporal/devServer';
import { WORKFLOWS_PATH } from '../../src/worker';
import { testPostgres } from './testPostgres';

const ADMIN_URL = process.env.GRAPHX_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export default async function globalSetup(): Promise<void> {
  const runId = `${Date.now().toString(36)}${process.pid}`;
  const runDir = path.resolve(__dirname, '..', '..', '.test-data', runId);
  fs.mkdirSync(runDir, { recursive: true });

  const databaseName = `graphx_test_${runId}`;
  const { adminUrl, embedded } = await testPostgres(process.env.GRAPHX_TEST_PG_ADMIN_URL ? null : ADMIN_URL, runDir);
  (globalThis as Record<string, unknown>).__graphxEmbeddedPostgres = embedded;
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${databaseName}"`);
  await admin.end();
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${databaseName}`);
  const db = createDb(databaseUrl);
  await migrateToLatest(db);
  await db.destroy();

  const [temporal, bundle] = await Promise.all([
    startTestTemporal(runDir),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }),
  ]);
  const bundlePath = path.join(runDir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, bundle.code);

  process.env.GRAPHX_TEST_RUN_DIR = runDir;
  process.env.GRAPHX_TEST_DATABASE_URL = databaseUrl;
  process.env.GRAPHX_TEST_DATABASE_NAME = databaseName;
  process.env.GRAPHX_TEST_PG_ADMIN_URL = adminUrl;
  process.env.GRAPHX_TEST_TEMPORAL_ADDRESS = temporal.address;
  process.env.GRAPHX_TEST_WORKFLOW_BUNDLE = bundlePath;
  (globalThis as Record<string, unknown>).__graphxTemporal = temporal;
}

/**
 * The dev server on a free port, tried up to three times: between `findFreePort` and the server's bind another
 * process can take the port (seen on a busy machine), and the server then exits at once.
 */
async function startTestTemporal(runDir: string): Promise<TemporalDevServer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startTemporalDevServer({
        dbFile: null,
        port: await findFreePort(),
        uiPort: null,
        namespace: 'default',
        logFile: path.join(runDir, `temporal${attempt > 1 ? `-${attempt}` : ''}.log`),
        // In memory: a restarted server would have lost the run's workflows, so a crash fails the run instead.
        supervise: false,
      });
    } catch (error) {
      if (attempt >= 3 || !/exited (early|during start-up)/.test((error as Error).message)) throw error;
    }
  }
}
