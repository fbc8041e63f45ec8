/**
 * Custom auth on the assistant routes (in each graph language: the app's graphs and its auth both in it):
 * `assistants:create` stamps the owner, and the owner filter of the other actions hides another user's assistants
 * (404 on every route, absent from search and count, not runnable); a handler returning false is a 403.
 */
import { Client } from '@langchain/langgraph-sdk';
import path from 'node:path';
import { findFreePort } from '@graphx/kit/net/ports';
import {
  createTestDatabase,
  fixtureConfig,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  spawnRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    database = await createTestDatabase('assistants_auth');
    const port = await findFreePort();
    const config = path.join(path.dirname(fixtureConfig(fixtureIn('runtime-assistants', language))), 'graphx.auth.json');
    runtime = await spawnRuntime({
      args: ['dev', '--config', config, '--port', String(port)],
      env: { DATABASE_URI: database.url },
      port,
    });
    alice = new Client({ apiUrl: runtime.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer alice-token' } });
    bob = new Client({ apiUrl: runtime.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer bob-token' } });
  }, RUNTIME_START_MS + 30_000);

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

  test("no run body can name another user's assistant: streamed, waited, background, batched, thread runs and crons are 404", async () => {
    const mine = await alice.assistants.create({ graphId: 'persona', config: { configurable: { persona: 'secret' } } });
    const bobsThread = await bob.threads.create();
    const body = { assistant_id: mine.assistant_id, input: { messages: [{ role: 'user', content: 'hi' }] } };
    const attempts: Array<[string, unknown]> = [
      ['/runs/stream', body],
      ['/runs/wait', body],
      ['/runs', body],
      ['/runs/batch', [body]],
      [`/threads/${bobsThread.thread_id}/runs/stream`, body],
      [`/threads/${bobsThread.thread_id}/runs/wait`, body],
      [`/threads/${bobsThread.thread_id}/runs`, body],
      ['/runs/crons', { ...body, schedule: '0 0 1 1 *' }],
      [`/threads/${bobsThread.thread_id}/runs/crons`, { ...body, schedule: '0 0 1 1 *' }],
    ];
    for (const [path, payload] of attempts) {
      const response = await fetch(`${runtime.url}${path}`, {
        method: 'POST',
        headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      const text = await response.text();
      expect({ path, status: response.status, detail: typeof JSON.parse(text).detail }).toEqual({
        path,
        status: 404,
        detail: 'string',
      });
      expect(text).not.toContain('secret');
    }
    expect(await bob.runs.list(bobsThread.thread_id)).toEqual([]);
    expect(await bob.crons.search()).toEqual([]);
  });
});
