/**
 * Stops the shared Temporal dev server and drops the run's database and every deployment database (and role) the
 * run's pipelines provisioned but did not delete: a test run leaves no process and no database behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EmbeddedPostgresHandle } from '@graphx/kit/os/embeddedPostgres';
import { removeRelocatedCluster } from '@graphx/kit/os/postgresPlacement';
import { createDb } from '../../src/db/knex';
import { dropDeploymentDatabase } from '../../src/pipeline/deploymentDatabase';
import type { TemporalDevServer } from '../../src/temporal/devServer';

export default async function globalTeardown(): Promise<void> {
  const temporal = (globalThis as Record<string, unknown>).__graphxTemporal as TemporalDevServer | undefined;
  await temporal?.stop();
  const runDb = createDb(process.env.GRAPHX_TEST_DATABASE_URL as string, 1);
  // Deployments of other runs live in their own run database, so only this run's are touched.
  const deploymentIds: string[] = await runDb('deployments')
    .pluck('id')
    .catch(() => [])
    .finally(() => runDb.destroy());
  const admin = createDb(process.env.GRAPHX_TEST_PG_ADMIN_URL as string, 1);
  try {
    for (const deploymentId of deploymentIds) await dropDeploymentDatabase(admin, deploymentId);
    await admin.raw(`DROP DATABASE IF EXISTS "${process.env.GRAPHX_TEST_DATABASE_NAME}" WITH (FORCE)`);
  } finally {
    await admin.destroy();
  }
  const embedded = (globalThis as Record<string, unknown>).__graphxEmbeddedPostgres as EmbeddedPostgresHandle | undefined;
  await embedded?.stop();
  if (process.env.GRAPHX_TEST_RUN_DIR && !process.env.GRAPHX_KEEP_TEST_DATA) {
    if (embedded) removeRelocatedCluster(path.join(process.env.GRAPHX_TEST_RUN_DIR, 'embedded-postgres'));
    fs.rmSync(process.env.GRAPHX_TEST_RUN_DIR, { recursive: true, force: true });
  }
}
