/**
 * Join streams and the thread stream through the official JS client, over two `graphx dev` instances sharing one
 * database: whichever instance executes a background run, a joiner on either sees every event from the run's start
 * (with the same ids, and `Last-Event-ID` replay), an error as an `error` event; `threads.joinStream` shows
 * the runs of a thread as they come, each run's end, and state updates.
 */
import { type Client } from '@langchain/langgraph-sdk';
import { devAppsForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const say = (content: string) => ({ messages: [{ role: 'user', content }] });
  const texts = (values: any) => (values.messages as Array<{ content: string }>).map((message) => message.content);
  const apps = devAppsForSuite('joins', fixtureIn('runtime-echo', language), { count: 2 });
  let clients: Client[];

  beforeAll(() => {
    clients = apps.clients;
  });

  type Event = { event: string; data: any; id?: string };

  async function collect(stream: AsyncIterable<Event>): Promise<Event[]> {
    const events: Event[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  /** Reads a stream that never ends by itself until `enough` says so (or 15 s), then leaves. */
  async function collectUntil(open: (signal: AbortSignal) => AsyncIterable<Event>, enough: (events: Event[]) => boolean) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 15_000);
    const events: Event[] = [];
    try {
      for await (const event of open(abort.signal)) {
        events.push(event);
        if (enough(events)) break;
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    return events;
  }

  test('a background run joined on both instances right after its creation gives each joiner every event', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const thread = await clients[0]!.threads.create();
      const run = await clients[0]!.runs.create(thread.thread_id, 'agent', {
        input: say(`join ${attempt}`),
        streamMode: ['values', 'updates'],
      });
      const [here, there] = await Promise.all(
        clients.map((client) => collect(client.runs.joinStream(thread.thread_id, run.run_id))),
      );
      expect(here!.map((event) => event.event)).toEqual(['metadata', 'values', 'updates', 'values', 'updates', 'values']);
      expect(there).toEqual(here);
      expect(texts(here!.at(-1)!.data)).toEqual([`join ${attempt}`, `echo: join ${attempt}`, 'ok']);
      expect(here!.map((event) => event.id)).toEqual(['0', '1', '2', '3', '4', '5']);
    }
  });

  test('a resumable run replays from Last-Event-ID on either instance after it ended, with the same ids', async () => {
    const thread = await clients[1]!.threads.create();
    const run = await clients[1]!.runs.create(thread.thread_id, 'agent', {
      input: say('replay'),
      streamMode: ['values'],
      streamResumable: true,
    });
    await clients[1]!.runs.join(thread.thread_id, run.run_id);
    const [first, second] = await Promise.all(
      clients.map((client) => collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }))),
    );
    expect(first!.map((event) => [event.id, event.event])).toEqual([
      ['0', 'metadata'],
      ['1', 'values'],
      ['2', 'values'],
      ['3', 'values'],
    ]);
    expect(second).toEqual(first);
    const after = await collect(clients[0]!.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '1' }));
    expect(after.map((event) => event.id)).toEqual(['2', '3']);
  });

  test('a join with stream_mode gets only those modes (and the metadata)', async () => {
    const thread = await clients[0]!.threads.create();
    const run = await clients[0]!.runs.create(thread.thread_id, 'agent', {
      input: say('only updates'),
      streamMode: ['values', 'updates'],
    });
    const events = await collect(clients[1]!.runs.joinStream(thread.thread_id, run.run_id, { streamMode: 'updates' }));
    expect(events.map((event) => event.event)).toEqual(['metadata', 'updates', 'updates']);
    expect(Object.keys(events[1]!.data)).toEqual(['agent']);
  });

  test('an error in a background run reaches joiners on both instances as an error event', async () => {
    const thread = await clients[0]!.threads.create();
    const run = await clients[0]!.runs.create(thread.thread_id, 'failing', { input: say('boom') });
    const [here, there] = await Promise.all(
      clients.map((client) => collect(client.runs.joinStream(thread.thread_id, run.run_id))),
    );
    for (const events of [here!, there!]) {
      expect(events.at(-1)).toEqual({ id: expect.any(String), event: 'error', data: { error: 'CustomError', message: 'Boo!' } });
    }
    expect((await clients[0]!.runs.get(thread.thread_id, run.run_id)).status).toBe('error');
  });

  test('a thread stream shows the runs of the thread executed by either instance, their ends and state updates', async () => {
    const thread = await clients[0]!.threads.create();
    const isStateUpdate = (events: Event[]) => events.some((event) => event.event === 'state_update');
    const watching = collectUntil(
      (signal) => clients[1]!.threads.joinStream(thread.thread_id, { signal, streamMode: ['run_modes', 'state_update'] }),
      isStateUpdate,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const runs = [];
    for (const text of ['one', 'two']) {
      runs.push(await clients[0]!.runs.create(thread.thread_id, 'agent', { input: say(text), multitaskStrategy: 'enqueue' }));
    }
    for (const run of runs) await clients[0]!.runs.join(thread.thread_id, run.run_id);
    await clients[0]!.threads.updateState(thread.thread_id, { values: say('edited'), asNode: 'tools' });
    const events = await watching;

    const lifecycle = events.filter((event) => event.event === 'metadata').map((event) => event.data);
    expect(lifecycle).toEqual([
      { run_id: runs[0]!.run_id, attempt: 1 },
      { status: 'run_done', run_id: runs[0]!.run_id },
      { run_id: runs[1]!.run_id, attempt: 1 },
      { status: 'run_done', run_id: runs[1]!.run_id },
    ]);
    expect(texts(events.filter((event) => event.event === 'values').at(-1)!.data)).toEqual([
      'one',
      'echo: one',
      'ok',
      'two',
      'echo: two',
      'ok',
    ]);
    const update = events.at(-1)!;
    expect(update.event).toBe('state_update');
    expect(update.data.thread_id).toBe(thread.thread_id);
    expect(texts(update.data.state.values).at(-1)).toBe('edited');
    const ids = events.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    // From the start ('-'): by default every run event but no state update; lifecycle: each run's start and end.
    const runModes = await collectUntil(
      (signal) => clients[0]!.threads.joinStream(thread.thread_id, { signal, lastEventId: '-' }),
      (seen) => seen.length === events.length - 1,
    );
    expect(runModes).toEqual(events.slice(0, -1));
    const replay = await collectUntil(
      (signal) => clients[0]!.threads.joinStream(thread.thread_id, { signal, lastEventId: '-', streamMode: 'lifecycle' }),
      (seen) => seen.length === 4,
    );
    expect(replay.map((event) => event.data)).toEqual(lifecycle);
  });

  test('a thread stream of an unknown thread is 404 and an unknown stream mode is a 4xx, each with a JSON detail', async () => {
    const missing = await fetch(`${apps.runtimes[0]!.url}/threads/00000000-0000-4000-8000-000000000000/stream`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toHaveProperty('detail');
    const thread = await clients[0]!.threads.create();
    const bad = await fetch(`${apps.runtimes[0]!.url}/threads/${thread.thread_id}/stream?stream_mode=everything`);
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    expect(await bad.json()).toHaveProperty('detail');
    const badId = await fetch(`${apps.runtimes[0]!.url}/threads/${thread.thread_id}/stream`, {
      headers: { 'Last-Event-ID': 'yesterday' },
    });
    expect(badId.status).toBeGreaterThanOrEqual(400);
    expect(badId.status).toBeLessThan(500);
  });
});
