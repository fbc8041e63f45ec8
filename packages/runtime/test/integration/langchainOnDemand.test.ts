/**
 * An app whose graphs are all Python never runs a graph in Node, so its agent server leaves LangChain JS (the
 * PostgreSQL checkpointer and store, @langchain/core, langsmith, zod: ~28 MB resident) unloaded until something needs
 * it (src/storage/runtimeStorage.ts): not at start, not for runs, not when idle. The checkpointer's and the store's
 * tables are there all the same (migrated at start outside the server's process), and the first `/store` request and
 * the first thread delete load them on demand.
 */
import { Client as PgClient } from 'pg';
import { Client } from '@langchain/langgraph-sdk';
import { waitFor } from '@graphx/kit/net/ports';
import { createTestDatabase, fixtureIn, RUNTIME_START_MS, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';
import { recordLoadedModules } from './support/loadedModules';

const LANGCHAIN_JS = [
  '@langchain/langgraph-checkpoint-postgres',
  '@langchain/langgraph-checkpoint',
  '@langchain/core',
  'langsmith',
  'zod',
];
const hi = { messages: [{ role: 'user', content: 'hi' }] };

describe('LangChain JS on demand (Python graphs only)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;
  let client: Client;
  const record = recordLoadedModules();

  /** The packages the server's own process has loaded (the preload also records other processes, by their pid). */
  const serverLoaded = (): string[] => record.loadedBy(runtime.child.pid!);

  const collections = async (): Promise<number> => {
    const text = await (await fetch(`${runtime.url}/metrics`)).text();
    return Number(/^graphx_runtime_idle_collections_total\{[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    database = await createTestDatabase('lazy_langchain');
    runtime = await startDevRuntime(fixtureIn('runtime-echo', 'python'), database.url, {
      ...record.env(),
      GRAPHX_RUNTIME_IDLE_COLLECT_MS: '2000',
    });
    client = new Client({ apiUrl: runtime.url, apiKey: null });
  }, RUNTIME_START_MS);

  afterAll(async () => {
    const exitCode = await runtime?.stop();
    await database?.drop();
    record.remove();
    expect(exitCode).toBe(0);
  });

  let threadId: string;

  test('started, run and idle: none of it loaded in the server, its tables there', async () => {
    const thread = await client.threads.create();
    threadId = thread.thread_id;
    const values: any = await client.runs.wait(threadId, 'agent', { input: hi });
    expect(values.messages.length).toBeGreaterThan(1);
    expect((await client.threads.getState(threadId)).values).toEqual(values);
    await waitFor('an idle collection', async () => (await collections()) > 0, 30_000, 500);

    expect(serverLoaded()).toContain('pg');
    expect(serverLoaded().filter((name) => LANGCHAIN_JS.includes(name))).toEqual([]);
    const pg = new PgClient({ connectionString: database.url });
    await pg.connect();
    try {
      const { rows } = await pg.query(
        `SELECT to_regclass('public.checkpoints') AS checkpoints, to_regclass('public.checkpoint_migrations') AS migrations,
                to_regclass('public.store') AS store, to_regclass('public.store_migrations') AS store_migrations`,
      );
      expect(rows[0]).toEqual({
        checkpoints: 'checkpoints',
        migrations: 'checkpoint_migrations',
        store: 'store',
        store_migrations: 'store_migrations',
      });
    } finally {
      await pg.end();
    }
  });

  test('the first /store request loads the store and is served; so is the executor store use', async () => {
    await client.store.putItem(['notes', 'lazy'], 'first', { text: 'on demand' });
    expect((await client.store.getItem(['notes', 'lazy'], 'first'))?.value).toEqual({ text: 'on demand' });
    expect(serverLoaded()).toEqual(expect.arrayContaining(['@langchain/langgraph-checkpoint-postgres', '@langchain/core']));

    const remembered: any = await client.runs.wait(null, 'memory', {
      input: { messages: [{ role: 'user', content: 'keep this' }] },
      config: { configurable: { user_id: 'lazy' } },
    });
    expect(remembered.messages.at(-1).content).toBe('previous: none');
    expect((await client.store.getItem(['memories', 'lazy'], 'last'))?.value).toEqual({ text: 'keep this' });
  });

  test('a thread delete drops the thread and its checkpoints', async () => {
    await client.threads.delete(threadId);
    await expect(client.threads.get(threadId)).rejects.toThrow(/404|not found/i);
    const pg = new PgClient({ connectionString: database.url });
    await pg.connect();
    try {
      const { rows } = await pg.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [threadId]);
      expect(rows[0].n).toBe(0);
    } finally {
      await pg.end();
    }
  });
});
