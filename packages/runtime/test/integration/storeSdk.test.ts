/**
 * The long-term store through the official JS client against `graphx dev`: put, get, delete, search, namespaces and
 * TTL, and the same store seen by a graph through `config.store`.
 */
import { type Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { fixtureIn, graphLanguages, type GraphLanguage, devAppForSuite } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const app = devAppForSuite('store', fixtureIn('runtime-echo', language));

  test('an item is put, read, found by search with a filter, listed by namespace, and deleted (then reads as null)', async () => {
    await app.client.store.putItem(['docs', 'alice'], 'a', { topic: 'cats', n: 1 });
    await app.client.store.putItem(['docs', 'alice'], 'b', { topic: 'dogs', n: 2 });
    await app.client.store.putItem(['docs', 'bob'], 'c', { topic: 'cats', n: 3 });

    const item = await app.client.store.getItem(['docs', 'alice'], 'a');
    expect(item).toMatchObject({ namespace: ['docs', 'alice'], key: 'a', value: { topic: 'cats', n: 1 } });
    expect(item!.createdAt).toEqual(expect.any(String));

    const cats = await app.client.store.searchItems(['docs'], { filter: { topic: 'cats' } });
    expect(cats.items.map((found) => found.key).sort()).toEqual(['a', 'c']);
    const alice = await app.client.store.searchItems(['docs', 'alice'], { limit: 1 });
    expect(alice.items).toHaveLength(1);

    const namespaces = await app.client.store.listNamespaces({ prefix: ['docs'] });
    expect(namespaces.namespaces).toEqual([
      ['docs', 'alice'],
      ['docs', 'bob'],
    ]);

    await app.client.store.deleteItem(['docs', 'alice'], 'a');
    expect(await app.client.store.getItem(['docs', 'alice'], 'a')).toBeNull();
  });

  test('a search with an empty namespace prefix finds items under every namespace, newest first, page by page', async () => {
    // `everywhere` is a text prefix of `everywhere-too`: each item still comes back once.
    await app.client.store.putItem(['everywhere', 'x'], 'first', { suite: 'empty-prefix' });
    await app.client.store.putItem(['everywhere-too'], 'second', { suite: 'empty-prefix' });
    await app.client.store.putItem(['elsewhere'], 'third', { suite: 'empty-prefix' });
    const filter = { suite: 'empty-prefix' };
    const all = await app.client.store.searchItems([], { limit: 100, filter });
    expect(all.items.map((item) => [item.namespace, item.key])).toEqual([
      [['elsewhere'], 'third'],
      [['everywhere-too'], 'second'],
      [['everywhere', 'x'], 'first'],
    ]);
    const page = await app.client.store.searchItems([], { limit: 1, offset: 1, filter });
    expect(page.items.map((item) => item.key)).toEqual(['second']);
    expect((await app.client.store.searchItems([])).items.length).toBeGreaterThan(3);
  });

  test('an item past its TTL is gone', async () => {
    await app.client.store.putItem(['ttl'], 'short', { v: 1 }, { ttl: 1 });
    expect((await app.client.store.getItem(['ttl'], 'short'))!.value).toEqual({ v: 1 });
    // Ages the item by hand: a TTL is in minutes.
    const pg = new PgClient({ connectionString: app.database.url });
    await pg.connect();
    await pg.query(`UPDATE store SET expires_at = now() - interval '1 second' WHERE key = 'short'`);
    await pg.end();
    expect(await app.client.store.getItem(['ttl'], 'short')).toBeNull();
  });

  test('a graph reads and writes the same store through config.store', async () => {
    await app.client.store.putItem(['memories', 'carol'], 'last', { text: 'from the API' });
    const values: any = await app.client.runs.wait(null, 'memory', {
      input: { messages: [{ role: 'user', content: 'from the graph' }] },
      config: { configurable: { user_id: 'carol' } },
    });
    expect(values.messages.at(-1).content).toBe('previous: from the API');
    expect((await app.client.store.getItem(['memories', 'carol'], 'last'))!.value).toEqual({ text: 'from the graph' });
  });

  test('a namespace label with a period or a missing key is refused with 422', async () => {
    const response = await fetch(`${app.runtime.url}/store/items`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: ['a.b'], key: 'k', value: {} }),
    });
    expect(response.status).toBe(422);
    const missing = await fetch(`${app.runtime.url}/store/items?namespace=a`);
    expect(missing.status).toBe(422);
  });

  test('a search matches the prefix by whole labels: items of ["alice"] never appear under ["ali"], and pages stay full', async () => {
    await app.client.store.putItem(['ali'], 'ali-1', { n: 1 });
    await app.client.store.putItem(['ali', 'notes'], 'ali-2', { n: 2 });
    await app.client.store.putItem(['ali'], 'ali-3', { n: 3 });
    // Newer, so the library's text match would put them first.
    for (const n of [1, 2, 3, 4, 5]) await app.client.store.putItem(['alice'], `alice-${n}`, { n });

    const keysOf = (found: { items: Array<{ key: string }> }) => found.items.map((item) => item.key);
    expect(keysOf(await app.client.store.searchItems(['ali']))).toEqual(['ali-3', 'ali-2', 'ali-1']);
    expect(keysOf(await app.client.store.searchItems(['ali'], { limit: 2 }))).toEqual(['ali-3', 'ali-2']);
    expect(keysOf(await app.client.store.searchItems(['ali'], { limit: 2, offset: 2 }))).toEqual(['ali-1']);
    expect(keysOf(await app.client.store.searchItems(['ali'], { limit: 1, offset: 1, filter: { n: 2 } }))).toEqual([]);
    expect(keysOf(await app.client.store.searchItems(['alice'], { limit: 2, offset: 3 }))).toEqual(['alice-2', 'alice-1']);
  });

  test('a namespace listing matches prefix and suffix by whole labels, and max_depth truncates namespaces once each', async () => {
    await app.client.store.putItem(['tree', 'a', 'x'], 'k', {});
    await app.client.store.putItem(['tree', 'a', 'y'], 'k', {});
    await app.client.store.putItem(['tree', 'b'], 'k', {});
    await app.client.store.putItem(['treehouse', 'a'], 'k', {});
    await app.client.store.putItem(['tree', 'ax'], 'k', {});

    const list = async (options: Parameters<Client['store']['listNamespaces']>[0]) =>
      (await app.client.store.listNamespaces(options)).namespaces;
    expect(await list({ prefix: ['tree'] })).toEqual([
      ['tree', 'a', 'x'],
      ['tree', 'a', 'y'],
      ['tree', 'ax'],
      ['tree', 'b'],
    ]);
    expect(await list({ prefix: ['tree'], suffix: ['x'] })).toEqual([['tree', 'a', 'x']]);
    expect(await list({ prefix: ['tree'], maxDepth: 2 })).toEqual([
      ['tree', 'a'],
      ['tree', 'ax'],
      ['tree', 'b'],
    ]);
    expect(await list({ prefix: ['tree'], maxDepth: 2, limit: 1, offset: 1 })).toEqual([['tree', 'ax']]);
    expect(await list({ prefix: ['tree'], limit: 2, offset: 2 })).toEqual([
      ['tree', 'ax'],
      ['tree', 'b'],
    ]);
  });

  test('a LIKE wildcard in a label is refused with 422 and never matches other namespaces: ["a_"] does not list ["ab"]', async () => {
    await app.client.store.putItem(['ab'], 'k', { v: 1 });
    const post = (path: string, body: unknown) =>
      fetch(`${app.runtime.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const label of ['a_', 'a%']) {
      const listed = await post('/store/namespaces', { prefix: [label] });
      expect(listed.status).toBe(422);
      expect(JSON.stringify(await listed.json())).toContain('wildcard');
      expect((await post('/store/namespaces', { suffix: [label.replace('a', 'b')] })).status).toBe(422);
      expect((await post('/store/items/search', { namespace_prefix: [label] })).status).toBe(422);
    }
    expect((await app.client.store.listNamespaces({ prefix: ['ab'] })).namespaces).toEqual([['ab']]);
  });

  test('a namespace label containing ":" is refused with 422 in every store route, saying why', async () => {
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${app.runtime.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const responses = [
      await send('PUT', '/store/items', { namespace: ['user:1'], key: 'k', value: {} }),
      await send('GET', `/store/items?namespace=${encodeURIComponent('user:1')}&key=k`),
      await send('DELETE', '/store/items', { namespace: ['user:1'], key: 'k' }),
      await send('POST', '/store/items/search', { namespace_prefix: ['user:1'] }),
      await send('POST', '/store/namespaces', { prefix: ['user:1'] }),
      await send('POST', '/store/namespaces', { suffix: ['user:1'] }),
    ];
    for (const response of responses) {
      expect(response.status).toBe(422);
      expect(JSON.stringify(await response.json())).toContain("':'");
    }
    expect(await app.client.store.getItem(['user'], 'k')).toBeNull();
  });
});
