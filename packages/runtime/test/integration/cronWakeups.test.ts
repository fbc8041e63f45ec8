/**
 * The cron scheduler with its default settings, over two `graphx dev` instances on one database: an instance sleeps
 * until the next cron is due instead of asking the database every second, and a cron created on either instance wakes
 * both. What the database sees is read from `pg_stat_activity` (the statement each backend last ran, and when).
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { devAppsForSuite, fixtureIn } from './support/runtimeHarness';

describe('cron wake-ups', () => {
  let pg: PgClient;
  afterAll(async () => {
    await pg?.end();
  });
  const apps = devAppsForSuite('cronwake', fixtureIn('runtime-echo', 'javascript'), { count: 2 });

  beforeAll(async () => {
    pg = new PgClient({ connectionString: apps.database.url });
    await pg.connect();
  });

  /** Statements on graphx_crons the instances started during `ms` (sampled every 100 ms; a backend shows its last). */
  async function cronStatementsDuring(ms: number): Promise<number> {
    const seen = new Set<string>();
    const started = Date.now();
    while (Date.now() - started < ms) {
      const { rows } = await pg.query(
        `SELECT pid, query_start FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%graphx_crons%'
            AND query_start > now() - ($1 * interval '1 millisecond')`,
        [Date.now() - started],
      );
      for (const row of rows) seen.add(`${row.pid}@${(row.query_start as Date).toISOString()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return seen.size;
  }

  const runsOf = async (cronId: string) =>
    (await pg.query(`SELECT count(*)::int AS n FROM graphx_runs WHERE metadata->>'cron_id' = $1`, [cronId])).rows[0].n as number;

  test('with no cron due, idle instances leave the crons table alone (they polled it every second)', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await cronStatementsDuring(4_000)).toBe(0);
  });

  test('a cron created on one instance fires on its ticks at once, and stops when it is disabled', async () => {
    const client = new Client({ apiUrl: apps.runtimes[1]!.url, apiKey: null });
    const cron = await client.crons.create('agent', {
      schedule: '* * * * * *',
      input: { messages: [{ role: 'user', content: 'tick' }] },
    });
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(await runsOf(cron.cron_id)).toBeGreaterThanOrEqual(2);
    await new Client({ apiUrl: apps.runtimes[0]!.url, apiKey: null }).crons.update(cron.cron_id, { enabled: false });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const afterDisable = await runsOf(cron.cron_id);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await runsOf(cron.cron_id)).toBe(afterDisable);
    expect(await cronStatementsDuring(3_000)).toBe(0);
  });
});
