/**
 * PostgreSQL ending every connection of a deployed app (a database restart, a failover, an administrator's
 * `pg_terminate_backend`) must not end the app: its idle pools, the store's included, reconnect on next use and the
 * app goes on serving runs and store items. Before the fix the store's pool had no `error` listener and Node ended the
 * process on the first idle store connection killed.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;

beforeAll(async () => {
  database = await createTestDatabase('connloss');
  runtime = await startDevRuntime('runtime-echo', database.url);
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

/** Ends every session of the app's database but the caller's; how many it ended. */
async function terminateAppConnections(): Promise<number> {
  const admin = new PgClient({ connectionString: database.url });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows.filter((row: { ended: boolean }) => row.ended).length;
  } finally {
    await admin.end();
  }
}

test('the app survives PostgreSQL ending all its connections and serves runs and store items after', async () => {
  const client = new Client({ apiUrl: runtime.url, apiKey: null });
  // Leaves idle connections in every pool: the runtime's, the store's, and the notification listener.
  await client.store.putItem(['notes'], 'first', { text: 'before' });
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'one' }] } });

  expect(await terminateAppConnections()).toBeGreaterThanOrEqual(3);
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
