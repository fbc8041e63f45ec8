/**
 * PostgreSQL ending every connection of a deployed app (a database restart, a failover, an administrator's
 * `pg_terminate_backend`) must not end the app: its idle pools, the store's included (and, for Python graphs, the
 * executor's checkpointer pool), reconnect on next use and the app goes on serving runs and store items. Before the fix
 * the store's pool had no `error` listener and Node ended the process on the first idle store connection killed.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { devAppForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

/** Whether the app has a Python executor whose own pool PostgreSQL ends too (its sessions are named graphx-executor). */
const EXECUTOR_POOL: Record<GraphLanguage, boolean> = { javascript: false, python: true };

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const app = devAppForSuite('connloss', fixtureIn('runtime-echo', language));
  let database: { url: string };
  let runtime: (typeof app)['runtime'];

  beforeAll(() => {
    database = app.database;
    runtime = app.runtime;
  });

  /** Ends every session of the app's database but the caller's; the application names of those it ended. */
  async function terminateAppConnections(): Promise<string[]> {
    const admin = new PgClient({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `SELECT application_name, pg_terminate_backend(pid) AS ended FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      return rows.filter((row: { ended: boolean }) => row.ended).map((row: { application_name: string }) => row.application_name);
    } finally {
      await admin.end();
    }
  }

  test('the app survives PostgreSQL ending all its connections and serves runs and store items after', async () => {
    const client = new Client({ apiUrl: runtime.url, apiKey: null });
    // Leaves idle connections in every pool: the runtime's, the store's, and the notification listener (and the
    // Python executor's checkpointer pool).
    await client.store.putItem(['notes'], 'first', { text: 'before' });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'one' }] } });

    const ended = await terminateAppConnections();
    expect(ended.length).toBeGreaterThanOrEqual(3);
    expect(ended.includes('graphx-executor')).toBe(EXECUTOR_POOL[language]);
    // Idle connections learn of their end asynchronously; give them the moment to.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect({ exitCode: runtime.child.exitCode, output: runtime.child.exitCode === null ? '' : runtime.output() }).toEqual({
      exitCode: null,
      output: '',
    });

    expect((await client.store.getItem(['notes'], 'first'))?.value).toEqual({ text: 'before' });
    await client.store.putItem(['notes'], 'second', { text: 'after' });
    expect((await client.store.getItem(['notes'], 'second'))?.value).toEqual({ text: 'after' });
    const answer = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'two' }] },
    })) as { messages: Array<{ content: string }> };
    expect(answer.messages.map((message) => message.content)).toContain('echo: two');
    expect(runtime.child.exitCode).toBeNull();
  }, 120_000);
});
