/**
 * The agent-server API of `graphx dev` driven by the official JS client (`@langchain/langgraph-sdk`) and raw HTTP
 * over loopback, against the deterministic echo app (no LLM) and a fresh PostgreSQL database: the same tests over the
 * JavaScript app and its Python twin (runtime-echo-py).
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { waitFor } from '@graphx/kit/net/ports';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  readSse,
  RUNTIME_START_MS,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';

// What differs by language and nothing else: the fields a Python message dumps beside JS's, and the export kinds.
const PYTHON_MESSAGE_FIELDS = { name: null, usage_metadata: null };
const EXPORT_KINDS: Record<GraphLanguage, Record<string, string>> = {
  javascript: {
    uncompiled: 'from an uncompiled StateGraph',
    promised: 'from a promise',
    cjs: 'from commonjs',
    factory: 'built per run as per_run',
  },
  python: {
    uncompiled: 'from an uncompiled StateGraph',
    module: 'from a module path',
    factory: 'built per run as per_run',
    async_factory: 'built per run by a coroutine as per_run',
  },
};

describe.each(graphLanguages())('%s graphs', (language) => {
  const hi = { messages: [{ role: 'user', content: 'hi' }] };
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;
  let client: Client;

  async function collect(stream: AsyncIterable<{ event: string; data: unknown }>) {
    const events: Array<{ event: string; data: any }> = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  function post(path: string, body: unknown) {
    return fetch(`${runtime.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  beforeAll(async () => {
    database = await createTestDatabase('api');
    runtime = await startDevRuntime(fixtureIn('runtime-echo', language), database.url);
    client = new Client({ apiUrl: runtime.url, apiKey: null });
  }, RUNTIME_START_MS + 30_000);

  afterAll(async () => {
    const exitCode = await runtime?.stop();
    await database?.drop();
    expect(exitCode).toBe(0);
  });

  test('a threadless run in updates mode streams metadata then one update per node', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: hi, streamMode: 'updates' }));
    expect(events.map((event) => event.event)).toEqual(['metadata', 'updates', 'updates']);
    expect(events[0]!.data).toEqual({ run_id: expect.any(String), attempt: 1 });
    expect(events[1]!.data).toEqual({
      agent: {
        messages: [
          {
            id: 'ai-1',
            content: 'echo: hi',
            tool_calls: [],
            invalid_tool_calls: [],
            additional_kwargs: {},
            response_metadata: {},
            type: 'ai',
            ...(language === 'python' ? PYTHON_MESSAGE_FIELDS : {}),
          },
        ],
      },
    });
    expect(events[2]!.data.tools.messages[0]).toMatchObject({
      id: 'tool-2',
      content: 'ok',
      type: 'tool',
      tool_call_id: 'call-0',
    });
  });

  test('values mode is the default and sends the whole state after the input and after each step', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: hi }));
    expect(events.map((event) => event.event)).toEqual(['metadata', 'values', 'values', 'values']);
    expect(events[3]!.data.messages.map((message: { type: string }) => message.type)).toEqual(['human', 'ai', 'tool']);
  });

  test('messages mode sends messages/complete for every new message, the input included', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: hi, streamMode: 'messages' }));
    expect(events.map((event) => event.event)).toEqual([
      'metadata',
      'messages/complete',
      'messages/complete',
      'messages/complete',
    ]);
    expect(events.slice(1).map((event) => event.data[0].content)).toEqual(['hi', 'echo: hi', 'ok']);
  });

  test('messages-tuple mode sends event "messages" with [message, metadata]', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: hi, streamMode: 'messages-tuple' }));
    expect(events.map((event) => event.event)).toEqual(['metadata', 'messages', 'messages']);
    const [message, metadata] = events[1]!.data;
    expect(message).toMatchObject({ id: 'ai-1', content: 'echo: hi', type: 'ai' });
    expect(metadata).toMatchObject({ langgraph_node: 'agent', graph_id: 'agent', run_id: events[0]!.data.run_id });
  });

  test('custom mode relays what a node wrote with the stream writer', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: hi, streamMode: 'custom' }));
    expect(events).toEqual([expect.objectContaining({ event: 'metadata' }), { event: 'custom', data: { progress: 'agent' } }]);
  });

  test('the wire format is one compact data line per event with Content-Location naming the run', async () => {
    const response = await post('/runs/stream', {
      assistant_id: 'agent',
      input: hi,
      stream_mode: ['values', 'updates'],
      unknown_field: 1,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await readSse(response);
    const runId = (events[0]!.data as { run_id: string }).run_id;
    expect(response.headers.get('content-location')).toBe(`/runs/${runId}`);
    expect(events.map((event) => event.event)).toEqual(['metadata', 'values', 'updates', 'values', 'updates', 'values']);
  });

  test('a graph that throws mid-run sends an error event with error and message, then the stream closes', async () => {
    const events = await collect(client.runs.stream(null, 'failing', { input: hi, streamMode: 'updates' }));
    expect(events.map((event) => event.event)).toEqual(['metadata', 'updates', 'error']);
    expect(events[2]!.data).toEqual({ error: 'CustomError', message: 'Boo!' });
  });

  test('every export kind of the language runs (uncompiled StateGraph, promise, CommonJS, module path, factories)', async () => {
    const answers: Record<string, string> = {};
    for (const graph of Object.keys(EXPORT_KINDS[language])) {
      const events = await collect(
        client.runs.stream(null, graph, {
          input: { messages: [] },
          streamMode: 'updates',
          config: { configurable: { nodeName: 'per_run' } },
        }),
      );
      const update = events.find((event) => event.event === 'updates')!.data;
      answers[graph] = (Object.values(update)[0] as { messages: Array<{ content: string }> }).messages[0]!.content;
    }
    expect(answers).toEqual(EXPORT_KINDS[language]);
  });

  test('a thread keeps its state across two runs and getState returns it', async () => {
    const thread = await client.threads.create({ metadata: { purpose: 'two-turns' } });
    expect(await client.threads.get(thread.thread_id)).toMatchObject({
      thread_id: thread.thread_id,
      status: 'idle',
      metadata: { purpose: 'two-turns' },
    });
    await collect(client.runs.stream(thread.thread_id, 'agent', { input: hi, streamMode: 'updates' }));
    const second = await collect(
      client.runs.stream(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'again' }] },
        streamMode: 'messages-tuple',
      }),
    );
    expect(second[1]!.data[0]).toMatchObject({ id: 'ai-4', content: 'echo: again' });
    const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(thread.thread_id);
    expect(state.values.messages.map((message) => message.content)).toEqual([
      'hi',
      'echo: hi',
      'ok',
      'again',
      'echo: again',
      'ok',
    ]);
    expect(state.checkpoint?.checkpoint_id).toEqual(expect.any(String));
    const found = await client.threads.search({ metadata: { purpose: 'two-turns' } });
    expect(found.map((item) => item.thread_id)).toEqual([thread.thread_id]);
    expect(found[0]!.metadata).toMatchObject({ graph_id: 'agent' });
    expect((found[0]!.values as { messages: unknown[] }).messages).toHaveLength(6);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((run) => run.status)).toEqual(['success', 'success']);
  });

  test('GET /threads returns the same threads as POST /threads/search for the same filter', async () => {
    for (let index = 0; index < 3; index += 1) await client.threads.create({ metadata: { listing: 'same', index } });
    const searched = await client.threads.search({ metadata: { listing: 'same' }, limit: 2, offset: 1 });
    const listed = await fetch(
      `${runtime.url}/threads?metadata=${encodeURIComponent(JSON.stringify({ listing: 'same' }))}&limit=2&offset=1`,
    );
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-pagination-total')).toBe('3');
    expect(((await listed.json()) as Array<{ thread_id: string }>).map((thread) => thread.thread_id)).toEqual(
      searched.map((thread) => thread.thread_id),
    );
    expect(await client.threads.count({ metadata: { listing: 'same' } })).toBe(3);
  });

  test('threads can be patched and deleted, and a deleted thread answers 404 with detail', async () => {
    const thread = await client.threads.create();
    expect((await client.threads.update(thread.thread_id, { metadata: { renamed: true } })).metadata).toEqual({ renamed: true });
    await client.threads.delete(thread.thread_id);
    const response = await fetch(`${runtime.url}/threads/${thread.thread_id}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: `Thread with ID ${thread.thread_id} not found.` });
  });

  test('assistants.search lists one system assistant per graph, and an assistant is found by id or graph name', async () => {
    const assistants = await client.assistants.search({ limit: 100 });
    expect(assistants.map((assistant) => assistant.graph_id).sort()).toEqual(
      ['agent', 'failing', 'interrupting', 'memory', 'slow', ...Object.keys(EXPORT_KINDS[language])].sort(),
    );
    const agent = assistants.find((assistant) => assistant.graph_id === 'agent')!;
    expect(agent.assistant_id).toBe('fe096781-5601-53d2-b2f6-0d3403f7e9ca');
    expect((await client.assistants.get(agent.assistant_id)).graph_id).toBe('agent');
    const byId = await collect(client.runs.stream(null, agent.assistant_id, { input: hi, streamMode: 'updates' }));
    expect(byId).toHaveLength(3);
  });

  test('bad input gets a 4xx with detail: unknown assistant 404, bad stream_mode 422, malformed JSON 422, missing thread 404', async () => {
    const unknown = await post('/runs/stream', { assistant_id: 'nope', input: hi });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { detail: string }).detail).toMatch(/nope/);
    const badMode = await post('/runs/stream', { assistant_id: 'agent', stream_mode: 'bogus' });
    expect(badMode.status).toBe(422);
    expect(((await badMode.json()) as { detail: unknown[] }).detail[0]).toMatchObject({ loc: ['body', 'stream_mode'] });
    const malformed = await fetch(`${runtime.url}/threads/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(malformed.status).toBe(422);
    expect(((await malformed.json()) as { detail: Array<{ type: string }> }).detail[0]!.type).toBe('json_invalid');
    const missing = await post('/threads/00000000-0000-4000-8000-000000000000/runs/stream', { assistant_id: 'agent', input: hi });
    expect(missing.status).toBe(404);
    const notUuid = await fetch(`${runtime.url}/threads/not-a-uuid`);
    expect(notUuid.status).toBe(422);
  });

  test('a second run on a busy thread with multitask_strategy reject is refused with 409 while the first is still running', async () => {
    const thread = await client.threads.create();
    const first = post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'slow', input: hi });
    await waitFor('the thread to be busy', async () => (await client.threads.get(thread.thread_id)).status === 'busy', 5_000, 20);
    const second = await post(`/threads/${thread.thread_id}/runs/stream`, {
      assistant_id: 'slow',
      input: hi,
      multitask_strategy: 'reject',
    });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { detail: string }).detail).toMatch(/already running/);
    const result = (await (await first).json()) as { messages: Array<{ content: string }> };
    expect(result.messages.at(-1)!.content).toBe('done');
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  test('a second run on a busy thread that names no strategy is queued and runs after the first (Python default enqueue)', async () => {
    const thread = await client.threads.create();
    const first = post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'slow', input: hi });
    await waitFor('the thread to be busy', async () => (await client.threads.get(thread.thread_id)).status === 'busy', 5_000, 20);
    const second = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'second' }] },
    });
    expect(second.status).toBe(200);
    await first;
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((run) => run.status)).toEqual(['success', 'success']);
    expect(runs.map((run) => run.multitask_strategy)).toEqual(['enqueue', 'enqueue']);
    const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(thread.thread_id);
    // The queued run saw the first one's answer: it ran after it, on the same thread.
    expect(state.values.messages.map((message) => message.content)).toEqual(['hi', 'done', 'second', 'echo: second', 'ok']);
  });

  async function startSlowStreamAndDrop(threadId: string, extra: Record<string, unknown>) {
    const abort = new AbortController();
    const response = await fetch(`${runtime.url}/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'slow', input: hi, ...extra }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    await reader.read(); // the metadata event: the run has started
    abort.abort();
    return response;
  }

  test('a client that disconnects lets its run finish by default (Python on_disconnect continue)', async () => {
    const thread = await client.threads.create();
    const response = await startSlowStreamAndDrop(thread.thread_id, {});
    // Where the SDK reconnects a dropped stream (Location) and what the run is (Content-Location).
    const runPath = response.headers.get('content-location')!;
    expect(runPath).toMatch(new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`));
    expect(response.headers.get('location')).toBe(`${runPath}/stream`);
    // The run's own status, not the thread's: a thread may still read idle before its run has marked it busy.
    await waitFor(
      'the run to finish',
      async () => (await client.runs.list(thread.thread_id))[0]?.status === 'success',
      10_000,
      50,
    );
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(thread.thread_id);
    expect(state.values.messages.at(-1)!.content).toBe('done');
  });

  test('a client that disconnects cancels its run with on_disconnect cancel', async () => {
    const thread = await client.threads.create();
    await startSlowStreamAndDrop(thread.thread_id, { on_disconnect: 'cancel' });
    await waitFor(
      'the thread to be released',
      async () => (await client.threads.get(thread.thread_id)).status === 'idle',
      2_000,
      20,
    );
    // The slow node would take 3 s: the run ended well before that, as interrupted.
    expect((await client.runs.list(thread.thread_id))[0]?.status).toBe('interrupted');
  });

  test('thread search: select keeps the named fields, extract answers paths under extracted, sort_by state_updated_at', async () => {
    const first = await client.threads.create({ metadata: { suite: 'projection' } });
    const second = await client.threads.create({ metadata: { suite: 'projection' } });
    await client.runs.wait(second.thread_id, 'agent', { input: hi });
    await client.runs.wait(first.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'later' }] } });
    const response = await post('/threads/search', {
      metadata: { suite: 'projection' },
      select: ['thread_id', 'status'],
      extract: { last: 'values.messages[-1].content', first: 'values.messages[0].content', missing: 'values.nothing[3]' },
      sort_by: 'state_updated_at',
      sort_order: 'desc',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { thread_id: first.thread_id, status: 'idle', extracted: { last: 'ok', first: 'later', missing: null } },
      { thread_id: second.thread_id, status: 'idle', extracted: { last: 'ok', first: 'hi', missing: null } },
    ]);
    const bad = await post('/threads/search', { select: ['secrets'], extract: { a: 'values; DROP' } });
    expect(bad.status).toBe(422);
  });

  test('command.goto with a Send in the API form ({node, input}) runs that node with that input', async () => {
    const thread = await client.threads.create();
    const result = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: 'agent',
      command: { goto: { node: 'agent', input: { messages: [{ role: 'user', content: 'sent' }] } } },
    });
    expect(result.status).toBe(200);
    const values = (await result.json()) as { messages: Array<{ content: string }> };
    expect(values.messages.map((message) => message.content)).toContain('echo: sent');
  });

  test('threadless runs are persisted as run records without leaving a thread behind', async () => {
    const before = await client.threads.count();
    const events = await collect(client.runs.stream(null, 'agent', { input: hi, streamMode: 'updates' }));
    const runId = events[0]!.data.run_id;
    const pg = new PgClient({ connectionString: database.url });
    await pg.connect();
    try {
      await waitFor(
        'the run record',
        async () => (await pg.query('SELECT status FROM graphx_runs WHERE run_id = $1', [runId])).rows[0]?.status === 'success',
        5_000,
        20,
      );
    } finally {
      await pg.end();
    }
    expect(await client.threads.count()).toBe(before);
  });
});
