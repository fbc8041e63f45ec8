/** `npm test` on a machine without a PostgreSQL at 127.0.0.1:5432 runs on an embedded one, as `npm start` does. */
import { Client } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { removeRelocatedCluster } from '@graphx/kit/os/postgresPlacement';
import { makeDataDir } from '../../support/env';
import { testPostgres } from '../../support/testPostgres';

test('uses an embedded PostgreSQL when none answers at the probed address, and the probed one when it answers', async () => {
  const runDir = makeDataDir('no-postgres');
  const closedPort = await findFreePort();
  const { adminUrl, embedded } = await testPostgres(`postgres://postgres@127.0.0.1:${closedPort}/postgres`, runDir);
  try {
    expect(embedded).not.toBeNull();
    const client = new Client({ connectionString: adminUrl });
    await client.connect();
    expect((await client.query('SELECT current_database() AS name')).rows[0].name).toBe('postgres');
    await client.end();
  } finally {
    await embedded?.stop();
    removeRelocatedCluster(`${runDir}/embedded-postgres`);
  }
  const again = await testPostgres(adminUrl.replace(/:\d+\//, `:${closedPort}/`), runDir);
  expect(again.embedded).not.toBeNull();
  await again.embedded?.stop();
  const answering = await testPostgres(process.env.GRAPHX_TEST_PG_ADMIN_URL as string, runDir);
  expect(answering).toEqual({ adminUrl: process.env.GRAPHX_TEST_PG_ADMIN_URL, embedded: null });
}, 120_000);
