/**
 * The run lifecycle through the official JS client against `graphx dev`: background runs on a thread and without
 * one, get, list, join, join stream with `Last-Event-ID`, cancel (one and many), delete, the multitask strategies of
 * background runs (enqueue is a queue in the database), and the completion webhook.
 */
import http from 'node:http';
import { Client } from '@langchain/langgraph-sdk';
import {
  createTestDatabase,
  startDevRuntime,
  type RuntimeProcess,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  type GraphLanguage,
} from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const say = (content: string) => ({ messages: [{ role: 'user', content }] });
  const texts = (values: any) => (values.messages as Array<{ content: string }>).map((message) => message.content);
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;
  let client: Client;
  let hook: { server: http.Server; url: string; bodies: any[] };

  beforeAll(async () => {
    const bodies: any[] = [];
    const server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(text));
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hook = { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies };
    database = await createTestDatabase('bgruns');
    // Loopback webhooks are refused by default; this test's receiver lives on loopback.
    runtime = await startDevRuntime(fixtureIn('runtime-echo', language), database.url, {
      GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS: 'any',
    });
    client = new Client({ apiUrl: runtime.url, apiKey: null });
  }, RUNTIME_START_MS + 30_000);

  afterAll(async () => {
    await runtime?.stop();
    await database?.drop();
    hook?.server.close();
  });

  async function collect(stream: AsyncIterable<{ event: string; data: unknown }>) {
    const events: Array<{ event: string; data: any }> = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  test('a background run on a thread is pending at once, then joined for the thread values, then listed as success', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', { input: say('later') });
    expect(run).toMatchObject({ thread_id: thread.thread_id, status: 'pending' });
    const values = await client.runs.join(thread.thread_id, run.run_id);
    expect(texts(values)).toEqual(['later', 'echo: later', 'ok']);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    expect((await client.runs.list(thread.thread_id)).map((listed) => listed.run_id)).toContain(run.run_id);
    await client.runs.delete(thread.thread_id, run.run_id);
    await expect(client.runs.get(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
  });

  test('enqueued background runs of one thread run one after the other, in order; reject refuses a busy thread', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'slow', { input: say('a') });
    const second = await client.runs.create(thread.thread_id, 'agent', { input: say('b'), multitaskStrategy: 'enqueue' });
    await expect(client.runs.create(thread.thread_id, 'agent', { input: say('c'), multitaskStrategy: 'reject' })).rejects.toThrow(
      /409/,
    );
    const values = await client.runs.join(thread.thread_id, second.run_id);
    expect(texts(values)).toEqual(['a', 'done', 'b', 'echo: b', 'ok']);
    expect((await client.runs.get(thread.thread_id, first.run_id)).status).toBe('success');
  });

  test('cancel with wait stops a running background run; a pending one is cancelled before it starts', async () => {
    const thread = await client.threads.create();
    const running = await client.runs.create(thread.thread_id, 'slow', { input: say('stop me') });
    const queued = await client.runs.create(thread.thread_id, 'agent', { input: say('never'), multitaskStrategy: 'enqueue' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await client.runs.cancel(thread.thread_id, queued.run_id);
    await client.runs.cancel(thread.thread_id, running.run_id, true);
    expect((await client.runs.get(thread.thread_id, running.run_id)).status).toBe('interrupted');
    expect((await client.runs.get(thread.thread_id, queued.run_id)).status).toBe('interrupted');
    expect((await client.threads.get(thread.thread_id)).status).not.toBe('busy');
  });

  test('bulk cancel stops the running runs it names', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'slow', { input: say('bulk') });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const response = await fetch(`${runtime.url}/runs/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ thread_id: thread.thread_id, run_ids: [run.run_id] }),
    });
    expect(response.status).toBe(204);
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');
  });

  test('a resumable run replays its events to a join stream from Last-Event-ID, with id lines', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: say('replay'),
      streamMode: ['values'],
      streamResumable: true,
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const all = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' }));
    expect(all.map((event) => event.event)).toEqual(['metadata', 'values', 'values', 'values']);
    const raw = await fetch(`${runtime.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: { 'Last-Event-ID': '1' },
    });
    const text = await raw.text();
    expect(text.match(/^id: \d+$/gm)).toEqual(['id: 2', 'id: 3']);
  });

  test('a join stream of a run that is not resumable carries ids too and resumes after Last-Event-ID', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', { input: say('ids'), streamMode: ['values'] });
    await client.runs.join(thread.thread_id, run.run_id);
    const all = await collect(client.runs.joinStream(thread.thread_id, run.run_id));
    expect(all.map((event: any) => event.id)).toEqual(['0', '1', '2', '3']);
    const after = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '2' }));
    expect(after.map((event: any) => event.id)).toEqual(['3']);
  });

  test("a run cancelled before it started leaves its thread updatable through the run's graph", async () => {
    const thread = await client.threads.create();
    const queued = await client.runs.create(thread.thread_id, 'agent', { input: say('never'), afterSeconds: 5 });
    expect((await client.threads.get(thread.thread_id)).metadata).toMatchObject({ graph_id: 'agent' });
    await client.runs.cancel(thread.thread_id, queued.run_id);
    await client.threads.updateState(thread.thread_id, { values: say('instead'), asNode: 'agent' });
    expect(texts((await client.threads.getState(thread.thread_id)).values)).toEqual(['instead']);
    expect((await client.threads.get(thread.thread_id)).status).toBe('interrupted');
  });

  test('a live join stream of a running background run sees its events to the end', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'slow', { input: say('watch'), streamMode: ['values'] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = await collect(client.runs.joinStream(thread.thread_id, run.run_id));
    expect(texts(events.at(-1)!.data)).toEqual(['watch', 'done']);
  });

  test('a threadless background run completes and calls its webhook with the run and its values', async () => {
    const run = await client.runs.create(null, 'agent', { input: say('hook'), webhook: hook.url });
    expect(run.thread_id).toBeNull();
    const deadline = Date.now() + 10_000;
    while (hook.bodies.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(hook.bodies[0]).toMatchObject({ run_id: run.run_id, status: 'success' });
    expect(texts(hook.bodies[0].values)).toEqual(['hook', 'echo: hook', 'ok']);
  });

  test('a webhook that is not http(s) is refused with 422, and an unknown run is 404', async () => {
    const thread = await client.threads.create();
    const bad = await fetch(`${runtime.url}/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', webhook: 'ftp://example.com/x' }),
    });
    expect(bad.status).toBe(422);
    await expect(client.runs.get(thread.thread_id, crypto.randomUUID())).rejects.toThrow(/404/);
  });

  test('a run with afterSeconds waits its time: pending meanwhile, listed by status, and updateState refuses the thread', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: say('first') });
    const delayed = await client.runs.create(thread.thread_id, 'agent', { input: say('later'), afterSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await client.runs.get(thread.thread_id, delayed.run_id)).status).toBe('pending');
    expect((await client.runs.list(thread.thread_id)).length).toBe(2);
    expect((await client.runs.list(thread.thread_id, { status: 'pending' })).map((run) => run.run_id)).toEqual([delayed.run_id]);
    await expect(client.threads.updateState(thread.thread_id, { values: { messages: [] }, asNode: 'agent' })).rejects.toThrow(
      /409/,
    );

    const values = await client.runs.join(thread.thread_id, delayed.run_id);
    expect(texts(values).at(-1)).toBe('ok');
    expect((await client.runs.list(thread.thread_id, { status: 'success' })).length).toBe(2);
    expect(await client.runs.list(thread.thread_id, { status: 'pending' })).toEqual([]);

    const fresh = await client.threads.create();
    const queued = await client.runs.create(fresh.thread_id, 'agent', { input: say('x'), afterSeconds: 5 });
    await expect(client.threads.updateState(fresh.thread_id, { values: { messages: [] }, asNode: 'agent' })).rejects.toThrow(
      /409/,
    );
    await client.runs.cancel(fresh.thread_id, queued.run_id);
    expect((await client.runs.get(fresh.thread_id, queued.run_id)).status).toBe('interrupted');
  });

  test('runs.createBatch queues several stateless background runs at once, each completing with its own input', async () => {
    const before = hook.bodies.length;
    const runs = await client.runs.createBatch([
      { assistantId: 'agent', input: say('one'), webhook: hook.url },
      { assistantId: 'agent', input: say('two'), webhook: hook.url, streamMode: ['values', 'updates'] },
    ]);
    expect(runs.map((run) => [run.thread_id, run.status])).toEqual([
      [null, 'pending'],
      [null, 'pending'],
    ]);
    const deadline = Date.now() + 10_000;
    while (hook.bodies.length < before + 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const delivered = new Map(hook.bodies.slice(before).map((body) => [body.run_id, body]));
    expect(texts(delivered.get(runs[0]!.run_id).values)).toEqual(['one', 'echo: one', 'ok']);
    expect(texts(delivered.get(runs[1]!.run_id).values)).toEqual(['two', 'echo: two', 'ok']);
  });

  test('a batch that is empty, not a list, has a bad item or an unknown assistant is refused and queues nothing', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [[], 422, /at least 1/],
      [{ assistant_id: 'agent' }, 422, /array/],
      [[{ assistant_id: 'agent' }, { assistant_id: 'agent', streamMode: 'bogus' }], 422, /1.*stream_mode/],
      [[{ assistant_id: 'agent' }, { assistant_id: 'nope' }], 404, /nope/],
    ];
    for (const [body, status, detail] of cases) {
      const response = await fetch(`${runtime.url}/runs/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect([body, response.status]).toEqual([body, status]);
      expect(JSON.stringify(((await response.json()) as any).detail)).toMatch(detail);
    }
  });

  test('deleting an assistant interrupts its running and pending runs', async () => {
    const assistant = await client.assistants.create({ graphId: 'slow' });
    const thread = await client.threads.create();
    const running = await client.runs.create(thread.thread_id, assistant.assistant_id, { input: say('first') });
    const pending = await client.runs.create(thread.thread_id, assistant.assistant_id, {
      input: say('second'),
      multitaskStrategy: 'enqueue',
    });
    const deadline = Date.now() + 5_000;
    while ((await client.runs.get(thread.thread_id, running.run_id)).status !== 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const started = Date.now();
    await client.assistants.delete(assistant.assistant_id);
    await client.runs.join(thread.thread_id, running.run_id);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect((await client.runs.get(thread.thread_id, running.run_id)).status).toBe('interrupted');
    expect((await client.runs.get(thread.thread_id, pending.run_id)).status).toBe('interrupted');
  });
});
