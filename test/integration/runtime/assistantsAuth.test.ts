/**
 * Custom auth on the assistant routes: `assistants:create` stamps the owner, and the owner filter of the other
 * actions hides another user's assistants (404 on every route, absent from search and count, not runnable);
 * a handler returning false is a 403.
 */
import { Client } from '@langchain/langgraph-sdk';
import { findFreePort } from '../../../src/net/ports';
import { createTestDatabase, projectRoot, spawnRuntime, type RuntimeProcess } from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  database = await createTestDatabase('assistants_auth');
  const port = await findFreePort();
  const config = `${projectRoot}/test/fixtures/apps/runtime-assistants/graphx.auth.json`;
  runtime = await spawnRuntime({
    args: ['dev', '--config', config, '--port', String(port)],
    env: { DATABASE_URI: database.url },
    port,
  });
  alice = new Client({ apiUrl: runtime.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer alice-token' } });
  bob = new Client({ apiUrl: runtime.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer bob-token' } });
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

test("another user's assistant is invisible on every route and cannot be run", async () => {
  const mine = await alice.assistants.create({ graphId: 'persona', config: { configurable: { persona: 'secret' } } });
  expect(mine.metadata).toMatchObject({ owner: 'alice' });
  const id = mine.assistant_id;

  await expect(bob.assistants.get(id)).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.update(id, { name: 'taken' })).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.getVersions(id)).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.setLatest(id, 1)).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.getGraph(id)).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.getSchemas(id)).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.getSubgraphs(id)).rejects.toThrow('HTTP 404');
  expect((await bob.assistants.search()).map((assistant) => assistant.assistant_id)).not.toContain(id);
  expect(await bob.assistants.count()).toBe(0);
  await expect(bob.runs.wait(null, id, { input: { messages: [] } })).rejects.toThrow('HTTP 404');
  await expect(bob.assistants.create({ graphId: 'persona', assistantId: id, ifExists: 'do_nothing' })).rejects.toThrow(
    'HTTP 409',
  );

  expect((await alice.assistants.search()).map((assistant) => assistant.assistant_id)).toEqual([id]);
  expect(await alice.assistants.count()).toBe(1);
  const answer: any = await alice.runs.wait(null, id, { input: { messages: [{ role: 'user', content: 'hi' }] } });
  expect(answer.messages.at(-1).content).toBe('secret/flat');
});

test('an update keeps the owner stamped, and a delete refused by the handler is a 403', async () => {
  const mine = await bob.assistants.create({ graphId: 'persona', name: 'bob first' });
  const updated = await bob.assistants.update(mine.assistant_id, { metadata: { owner: 'alice' } });
  expect(updated.metadata).toMatchObject({ owner: 'bob' });
  await expect(bob.assistants.delete(mine.assistant_id)).rejects.toThrow('HTTP 403');
  await expect(alice.assistants.delete(mine.assistant_id)).rejects.toThrow('HTTP 404');
  expect((await bob.assistants.get(mine.assistant_id)).name).toBe('bob first');
});

test('without credentials the assistant routes are 401', async () => {
  const response = await fetch(`${runtime.url}/assistants/search`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status).toBe(401);
});
