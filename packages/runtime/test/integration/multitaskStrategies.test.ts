/**
 * `multitask_strategy` on a busy thread, driven by the official JS client over loopback against two `graphx dev`
 * processes sharing one database (as two instances of a revision do). The `slow` graph takes 3 s unless aborted.
 */
import { type Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { waitFor } from '@graphx/kit/net/ports';
import { devAppsForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const apps = devAppsForSuite('multitask', fixtureIn('runtime-echo', language), { count: 2, cleanExit: true });
  let clientA: Client;
  let clientB: Client;

  const say = (content: string) => ({ messages: [{ role: 'user', content }] });

  async function collect(stream: AsyncIterable<{ event: string; data: unknown }>) {
    const events: Array<{ event: string; data: any }> = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  /** Starts the slow run on instance A and resolves once the thread is busy; the promise of its events is returned. */
  async function slowRunOnA(threadId: string) {
    const events = collect(clientA.runs.stream(threadId, 'slow', { input: say('first'), streamMode: 'updates' }));
    await waitFor('the thread to be busy', async () => (await clientA.threads.get(threadId)).status === 'busy', 5_000, 20);
    // Wrapped: an async function returning the promise itself would wait for the whole run.
    return { events };
  }

  async function contents(threadId: string): Promise<string[]> {
    const state = await clientB.threads.getState<{ messages: Array<{ content: string }> }>(threadId);
    return state.values.messages.map((message) => message.content);
  }

  beforeAll(() => {
    [clientA, clientB] = apps.clients as [Client, Client];
  });

  test('reject refuses a run on a busy thread with 409 and leaves the running run alone', async () => {
    const thread = await clientA.threads.create();
    const { events: running } = await slowRunOnA(thread.thread_id);
    await expect(
      collect(clientB.runs.stream(thread.thread_id, 'agent', { input: say('second'), multitaskStrategy: 'reject' })),
    ).rejects.toThrow(/409/);
    await running;
    expect((await clientB.runs.list(thread.thread_id)).map((run) => run.status)).toEqual(['success']);
  });

  test('interrupt on another instance stops the running run as interrupted, then runs on the state it left', async () => {
    const thread = await clientA.threads.create();
    const { events: running } = await slowRunOnA(thread.thread_id);
    const started = Date.now();
    const events = await collect(
      clientB.runs.stream(thread.thread_id, 'agent', {
        input: say('second'),
        multitaskStrategy: 'interrupt',
        streamMode: 'updates',
      }),
    );
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(events.map((event) => event.event)).toEqual(['metadata', 'updates', 'updates']);
    expect((await running).map((event) => event.event)).toEqual(['metadata']);
    expect((await clientB.runs.list(thread.thread_id)).map((run) => run.status)).toEqual(['success', 'interrupted']);
    // The interrupted run's input checkpoint stays: its message is still in the thread.
    expect(await contents(thread.thread_id)).toEqual(['first', 'second', 'echo: second', 'ok']);
    expect((await clientB.threads.get(thread.thread_id)).status).toBe('idle');
  });

  test('interrupt issued the moment a background run is queued stops it, even before it holds its thread', async () => {
    // The window this closes: an instance has taken the queued run but not yet claimed its thread, so the thread does
    // not name the run and a cancel request written only there (or a notification before the run is tracked) is lost.
    const threads = await Promise.all(Array.from({ length: 12 }, () => clientA.threads.create()));
    const pairs = await Promise.all(
      threads.map(async ({ thread_id: threadId }, index) => {
        const client = index % 2 === 0 ? clientA : clientB;
        const first = await clientA.runs.create(threadId, 'slow', { input: say('first') });
        const second = await client.runs.create(threadId, 'agent', { input: say('second'), multitaskStrategy: 'interrupt' });
        return { threadId, first, second };
      }),
    );
    for (const { threadId, first, second } of pairs) {
      await clientB.runs.join(threadId, second.run_id);
      await clientB.runs.join(threadId, first.run_id);
    }
    const statuses = await Promise.all(
      pairs.map(async ({ threadId, first, second }) => [
        (await clientB.runs.get(threadId, first.run_id)).status,
        (await clientB.runs.get(threadId, second.run_id)).status,
      ]),
    );
    expect(statuses).toEqual(pairs.map(() => ['interrupted', 'success']));
  });

  test('rollback on another instance stops the running run and deletes it with the checkpoints it wrote', async () => {
    const thread = await clientA.threads.create();
    await collect(clientA.runs.stream(thread.thread_id, 'agent', { input: say('zero'), streamMode: 'updates' }));
    const { events: running } = await slowRunOnA(thread.thread_id);
    await collect(
      clientB.runs.stream(thread.thread_id, 'agent', {
        input: say('second'),
        multitaskStrategy: 'rollback',
        streamMode: 'updates',
      }),
    );
    await running;
    const runs = await clientB.runs.list(thread.thread_id);
    expect(runs).toHaveLength(2);
    const inputs = runs.map(
      (run) =>
        (run as unknown as { kwargs: { input: { messages: Array<{ content: string }> } } }).kwargs.input.messages[0]!.content,
    );
    expect(inputs).toEqual(['second', 'zero']);
    expect(await contents(thread.thread_id)).toEqual(['zero', 'echo: zero', 'ok', 'second', 'echo: second', 'ok']);
  });

  test('enqueue on another instance waits for the running run to finish, then runs after it', async () => {
    const thread = await clientA.threads.create();
    const { events: running } = await slowRunOnA(thread.thread_id);
    const queued = await collect(
      clientB.runs.stream(thread.thread_id, 'agent', {
        input: say('second'),
        multitaskStrategy: 'enqueue',
        streamMode: 'updates',
      }),
    );
    expect(queued.map((event) => event.event)).toEqual(['metadata', 'updates', 'updates']);
    expect((await running).map((event) => event.event)).toEqual(['metadata', 'updates']);
    expect((await clientB.runs.list(thread.thread_id)).map((run) => run.status)).toEqual(['success', 'success']);
    expect(await contents(thread.thread_id)).toEqual(['first', 'done', 'second', 'echo: second', 'ok']);
  });

  test('deleting a busy thread on another instance stops its run at once and leaves none of its checkpoints', async () => {
    const thread = await clientA.threads.create();
    const { events: running } = await slowRunOnA(thread.thread_id);
    const started = Date.now();
    await clientB.threads.delete(thread.thread_id);
    // The slow run would have finished its node (an `updates` event) after 3 s; it is stopped before.
    expect((await running).map((event) => event.event)).toEqual(['metadata']);
    expect(Date.now() - started).toBeLessThan(2_500);
    await expect(clientA.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    const pg = new PgClient({ connectionString: apps.database.url });
    await pg.connect();
    try {
      const rows = await pg.query('SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1', [thread.thread_id]);
      expect(rows.rows[0].n).toBe(0);
    } finally {
      await pg.end();
    }
  });
});
