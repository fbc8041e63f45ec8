/**
 * The long-term store through the official JS client against `graphx dev`: put, get, delete, search, namespaces and
 * TTL, and the same store seen by a graph through `config.store`.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let client: Client;

beforeAll(async () => {
  database = await createTestDatabase('store');
  runtime = await startDevRuntime('runtime-echo', database.url);
  client = new Client({ apiUrl: runtime.url, apiKey: null });
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

test('an item is put, read, found by search with a filter, listed by namespace, and deleted (then reads as null)', async () => {
  await client.store.putItem(['docs', 'alice'], 'a', { topic: 'cats', n: 1 });
  await client.store.putItem(['docs', 'alice'], 'b', { topic: 'dogs', n: 2 });
  await client.store.putItem(['docs', 'bob'], 'c', { topic: 'cats', n: 3 });

  const item = await client.store.getItem(['docs', 'alice'], 'a');
  expect(item).toMatchObject({ namespace: ['docs', 'alice'], key: 'a', value: { topic: 'cats', n: 1 } });
  expect(item!.createdAt).toEqual(expect.any(String));

  const cats = await client.store.searchItems(['docs'], { filter: { topic: 'cats' } });
  expect(cats.items.map((found) => found.key).sort()).toEqual(['a', 'c']);
  const alice = await client.store.searchItems(['docs', 'alice'], { limit: 1 });
  expect(alice.items).toHaveLength(1);

  const namespaces = await client.store.listNamespaces({ prefix: ['docs'] });
  expect(namespaces.namespaces).toEqual([
    ['docs', 'alice'],
    ['docs', 'bob'],
  ]);

  await client.store.deleteItem(['docs', 'alice'], 'a');
  expect(await client.store.getItem(['docs', 'alice'], 'a')).toBeNull();
});

test('an item past its TTL is gone', async () => {
  await client.store.putItem(['ttl'], 'short', { v: 1 }, { ttl: 1 });
  expect((await client.store.getItem(['ttl'], 'short'))!.value).toEqual({ v: 1 });
  // Ages the item by hand: a TTL is in minutes.
  const pg = new PgClient({ connectionString: database.url });
  await pg.connect();
  await pg.query(`UPDATE store SET expires_at = now() - interval '1 second' WHERE key = 'short'`);
  await pg.end();
  expect(await client.store.getItem(['ttl'], 'short')).toBeNull();
});

test('a graph reads and writes the same store through config.store', async () => {
  await client.store.putItem(['memories', 'carol'], 'last', { text: 'from the API' });
  const values: any = await client.runs.wait(null, 'memory', {
    input: { messages: [{ role: 'user', content: 'from the graph' }] },
    config: { configurable: { user_id: 'carol' } },
  });
  expect(values.messages.at(-1).content).toBe('previous: from the API');
  expect((await client.store.getItem(['memories', 'carol'], 'last'))!.value).toEqual({ text: 'from the graph' });
});

test('a namespace label with a period or a missing key is refused with 422', async () => {
  const response = await fetch(`${runtime.url}/store/items`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespace: ['a.b'], key: 'k', value: {} }),
  });
  expect(response.status).toBe(422);
  const missing = await fetch(`${runtime.url}/store/items?namespace=a`);
  expect(missing.status).toBe(422);
});
