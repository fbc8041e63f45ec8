/**
 * Custom auth (SPEC §5.3, CONTRACT §6) in `graphx dev`: the app's `Auth` from `@langchain/langgraph-sdk/auth`
 * authenticates bearer tokens of two users and scopes threads to their owner. Driven by the official JS client.
 */
import { Client } from '@langchain/langgraph-sdk';
import { fixtureIn, graphLanguages, type GraphLanguage, devAppForSuite } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const app = devAppForSuite('auth', fixtureIn('runtime-auth', language));
  let user1: Client;
  let user2: Client;
  const hi = { messages: [{ role: 'user', content: 'hi' }] };

  const clientFor = (token: string) =>
    new Client({ apiUrl: app.runtime.url, apiKey: null, defaultHeaders: { Authorization: `Bearer ${token}` } });

  async function lastAnswer(client: Client, threadId: string | null, config?: Record<string, unknown>) {
    let answer: any = null;
    const options = { input: hi, streamMode: 'updates' as const, config };
    const stream = threadId ? client.runs.stream(threadId, 'agent', options) : client.runs.stream(null, 'agent', options);
    for await (const event of stream) {
      if (event.event === 'updates') answer = JSON.parse((event.data as any).whoami.messages[0].content);
      if (event.event === 'error') throw new Error(JSON.stringify(event.data));
    }
    return answer;
  }

  beforeAll(() => {
    user1 = clientFor('user1-token');
    user2 = clientFor('user2-token');
  });

  test('a missing or wrong token is a 401 with the detail the handler gave', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }] as Array<Record<string, string>>) {
      const response = await fetch(`${app.runtime.url}/threads/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ detail: 'Invalid token' });
    }
    expect((await fetch(`${app.runtime.url}/ok`)).status).toBe(200);
  });

  test('a node receives the authenticated user and its custom fields at configurable.graphx_auth_user (and langgraph_auth_user)', async () => {
    expect(await lastAnswer(user1, null)).toEqual({
      identity: 'user1',
      org_id: 'org-a',
      github_token: 'gh-user1',
      user_id: 'user1',
      kind: null,
      anchor_identity: 'user1',
      anchor_user_id: 'user1',
    });
  });

  test('a client cannot spoof graphx_auth_user through config', async () => {
    const admin = { identity: 'admin', org_id: 'org-z' };
    const spoofed = {
      configurable: {
        graphx_auth_user: admin,
        graphx_auth_user_id: 'admin',
        langgraph_auth_user: admin,
        langgraph_auth_user_id: 'admin',
      },
    };
    expect(await lastAnswer(user2, null, spoofed)).toMatchObject({
      identity: 'user2',
      org_id: 'org-b',
      user_id: 'user2',
      anchor_identity: 'user2',
      anchor_user_id: 'user2',
    });
  });

  test("user B cannot read, search, run on or delete user A's thread, which is stamped with A as owner", async () => {
    const thread = await user1.threads.create({ metadata: { topic: 'secret' } });
    expect(thread.metadata).toEqual({ topic: 'secret', owner: 'user1' });
    expect(await lastAnswer(user1, thread.thread_id)).toMatchObject({ identity: 'user1' });

    await expect(user2.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    await expect(user2.threads.getState(thread.thread_id)).rejects.toThrow(/404/);
    await expect(user2.threads.update(thread.thread_id, { metadata: { owner: 'user2' } })).rejects.toThrow(/404/);
    await expect(user2.threads.delete(thread.thread_id)).rejects.toThrow(/404/);
    await expect(lastAnswer(user2, thread.thread_id)).rejects.toThrow(/404/);
    expect((await user2.threads.search({ limit: 100 })).map((item) => item.thread_id)).not.toContain(thread.thread_id);
    expect(await user2.threads.count({ metadata: { topic: 'secret' } })).toBe(0);
    const listed = await fetch(`${app.runtime.url}/threads`, { headers: { authorization: 'Bearer user2-token' } });
    expect(((await listed.json()) as Array<{ thread_id: string }>).map((item) => item.thread_id)).not.toContain(thread.thread_id);

    expect((await user1.threads.search({ metadata: { topic: 'secret' } })).map((item) => item.thread_id)).toEqual([
      thread.thread_id,
    ]);
    expect((await user1.threads.get(thread.thread_id)).metadata?.owner).toBe('user1');
  });

  test("user B joining the stream of a run on A's thread gets one error event saying 404, as for a missing thread", async () => {
    const thread = await user1.threads.create();
    const run = await user1.runs.create(thread.thread_id, 'agent', { input: hi });
    const seen = async (client: Client, threadId: string) => {
      const events = [];
      for await (const event of client.runs.joinStream(threadId, run.run_id)) events.push(event);
      return events;
    };
    const hidden = await seen(user2, thread.thread_id);
    expect(hidden).toEqual([
      { event: 'error', data: { error: 'NotFoundError', message: `404: Thread with ID ${thread.thread_id} not found.` } },
    ]);
    const missingId = crypto.randomUUID();
    expect(await seen(user2, missingId)).toEqual([
      { event: 'error', data: { error: 'NotFoundError', message: `404: Thread with ID ${missingId} not found.` } },
    ]);
    expect((await seen(user1, thread.thread_id)).map((event) => event.event)).not.toContain('error');
  });

  test('a debugging-UI header without a verifiable API key is a 401, never a trusted user', async () => {
    const response = await fetch(`${app.runtime.url}/threads/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-scheme': 'graphx-studio' },
      body: '{}',
    });
    expect(response.status).toBe(401);
  });

  test("user B cannot see, count, change or delete user A's cron, which is stamped with A as owner", async () => {
    const thread = await user1.threads.create();
    const cron = await user1.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 0 1 1 *', input: hi });
    expect(cron.metadata).toMatchObject({ owner: 'user1' });
    expect((await user1.crons.search()).map((found) => found.cron_id)).toContain(cron.cron_id);
    expect(await user2.crons.search()).toEqual([]);
    expect(await user2.crons.count()).toBe(0);
    await expect(user2.crons.update(cron.cron_id, { enabled: false })).rejects.toThrow(/404/);
    await expect(user2.crons.delete(cron.cron_id)).rejects.toThrow(/404/);
    await expect(user2.crons.createForThread(thread.thread_id, 'agent', { schedule: '* * * * *' })).rejects.toThrow(/404/);
    expect(await user1.crons.count()).toBe(1);
    await user1.crons.delete(cron.cron_id);
  });

  test('a cron handed to another user by its metadata runs as whoever last changed it, never as its creator', async () => {
    const thread = await user1.threads.create();
    const cron = await user1.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 0 1 1 *', input: hi });
    expect(cron.user_id).toBe('user1');
    await user1.crons.update(cron.cron_id, { metadata: { owner: 'user2' } });
    const changedByB = await user2.crons.update(cron.cron_id, { input: { messages: [{ role: 'user', content: 'as B' }] } });
    expect(changedByB.user_id).toBe('user2');
    await user2.crons.delete(cron.cron_id);
  });

  test("user B's copy of user A's thread is a 404 as the Python server answers it, and B cannot watch its stream; A copies it", async () => {
    const thread = await user1.threads.create({ metadata: { topic: 'copied' } });
    await expect(user2.threads.copy(thread.thread_id)).rejects.toThrow(/404/);
    const copied = await user1.threads.copy(thread.thread_id);
    expect(copied.metadata).toMatchObject({ topic: 'copied', owner: 'user1', thread_id: copied.thread_id });
    const watched = await fetch(`${app.runtime.url}/threads/${thread.thread_id}/stream`, {
      headers: { authorization: 'Bearer user2-token' },
    });
    expect(watched.status).toBe(404);
    expect(await watched.json()).toHaveProperty('detail');
  });

  test('a user whose identity is a text prefix of another never sees the other store through search or the namespace list', async () => {
    const user10 = clientFor('user10-token');
    await user10.store.putItem(['user10', 'notes'], 'secret', { text: 'of user10' });
    await user1.store.putItem(['user1', 'notes'], 'mine', { text: 'of user1' });

    const found = await user1.store.searchItems(['user1']);
    expect(found.items.map((item) => [item.namespace, item.key])).toEqual([[['user1', 'notes'], 'mine']]);
    expect((await user1.store.listNamespaces({ prefix: ['user1'] })).namespaces).toEqual([['user1', 'notes']]);
    expect((await user1.store.listNamespaces({ prefix: ['user1'], maxDepth: 1 })).namespaces).toEqual([['user1']]);
    await expect(user1.store.getItem(['user10', 'notes'], 'secret')).rejects.toThrow('403');
  });

  test("a store handler's namespace rewrite is what is written, read and deleted (each user's `mine` is their own)", async () => {
    const [user1, user2] = [clientFor('user1-token'), clientFor('user2-token')];
    await user1.store.putItem(['mine', 'prefs'], 'theme', { colour: 'green' });
    await user2.store.putItem(['mine', 'prefs'], 'theme', { colour: 'red' });
    expect((await user1.store.getItem(['user1', 'prefs'], 'theme'))?.value).toEqual({ colour: 'green' });
    expect((await user1.store.getItem(['mine', 'prefs'], 'theme'))?.value).toEqual({ colour: 'green' });
    expect((await user2.store.getItem(['mine', 'prefs'], 'theme'))?.value).toEqual({ colour: 'red' });
    await user2.store.deleteItem(['mine', 'prefs'], 'theme');
    expect(await user2.store.getItem(['user2', 'prefs'], 'theme')).toBeNull();
    expect((await user1.store.getItem(['mine', 'prefs'], 'theme'))?.value).toEqual({ colour: 'green' });
  });
});
