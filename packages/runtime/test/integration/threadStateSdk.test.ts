/**
 * Thread state through the official JS client against `graphx dev`: history newest first (as `useStream` reads it on
 * its first render), state at a checkpoint, updates as a node, copies, interrupts and their resumption, and forking a
 * run from an earlier checkpoint.
 */
import { fixtureIn, graphLanguages, type GraphLanguage, devAppForSuite } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const say = (content: string) => ({ messages: [{ role: 'user', content }] });
  const app = devAppForSuite('state', fixtureIn('runtime-echo', language));

  const texts = (values: any) => (values.messages as Array<{ content: string }>).map((message) => message.content);

  test('history lists checkpoints newest first, the head first, and pages with limit and before', async () => {
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('one') });
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('two') });

    const history = await app.client.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history.length).toBeGreaterThan(4);
    const head = await app.client.threads.getState(thread.thread_id);
    expect(history[0]!.checkpoint.checkpoint_id).toBe(head.checkpoint.checkpoint_id);
    expect(texts(history[0]!.values)).toEqual(['one', 'echo: one', 'ok', 'two', 'echo: two', 'ok']);
    const ids = history.map((state) => state.checkpoint.checkpoint_id!);
    expect([...ids].sort().reverse()).toEqual(ids);

    const page = await app.client.threads.getHistory(thread.thread_id, {
      limit: 2,
      before: { configurable: history[1]!.checkpoint },
    });
    expect(page.map((state) => state.checkpoint.checkpoint_id)).toEqual([ids[2], ids[3]]);
    const inputs = await app.client.threads.getHistory(thread.thread_id, { limit: 100, metadata: { source: 'input' } });
    expect(inputs.length).toBe(2);

    const earlier = await app.client.threads.getState(thread.thread_id, ids[3]!);
    expect(earlier.checkpoint.checkpoint_id).toBe(ids[3]);
    const viaPost = await app.client.threads.getState(thread.thread_id, {
      ...history[3]!.checkpoint,
      checkpoint_map: null,
    } as any);
    expect(viaPost.values).toEqual(earlier.values);
  });

  test('history of a thread that never ran is empty, and of an unknown thread 404', async () => {
    const thread = await app.client.threads.create();
    expect(await app.client.threads.getHistory(thread.thread_id)).toEqual([]);
    const response = await fetch(`${app.runtime.url}/threads/${crypto.randomUUID()}/history`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    const bad = await fetch(`${app.runtime.url}/threads/${thread.thread_id}/history`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ limit: 'many' }),
    });
    expect(bad.status).toBe(422);
  });

  test('an interrupt shows in the state and the thread, and a resume command completes the run', async () => {
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, 'interrupting', { input: say('deploy?') });
    const state = await app.client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['ask']);
    expect(state.tasks[0]!.interrupts).toEqual([expect.objectContaining({ value: { question: 'approve?' } })]);
    const interrupted = await app.client.threads.get(thread.thread_id);
    expect(interrupted.status).toBe('interrupted');
    expect(Object.values(interrupted.interrupts).flat()).toEqual([expect.objectContaining({ value: { question: 'approve?' } })]);
    expect(texts(interrupted.values)).toEqual(['deploy?']);

    const resumed = await app.client.runs.wait(thread.thread_id, 'interrupting', { command: { resume: 'yes' } });
    expect(texts(resumed)).toEqual(['deploy?', 'answer: yes']);
    const done = await app.client.threads.get(thread.thread_id);
    expect(done.status).toBe('idle');
    expect(done.interrupts).toEqual({});
  });

  test('updateState writes values as a node, and a busy thread refuses it', async () => {
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('hello') });
    const updated: any = await app.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'added', id: 'added-1' }] },
      asNode: 'tools',
    });
    expect(updated.checkpoint.checkpoint_id).toEqual(expect.any(String));
    const state = await app.client.threads.getState(thread.thread_id);
    expect(texts(state.values).at(-1)).toBe('added');
    expect(state.metadata?.source).toBe('update');
    expect(texts((await app.client.threads.get(thread.thread_id)).values).at(-1)).toBe('added');

    const slowThread = await app.client.threads.create();
    const running = app.client.runs.wait(slowThread.thread_id, 'slow', { input: say('x') });
    await new Promise((resolve) => setTimeout(resolve, 700));
    await expect(app.client.threads.updateState(slowThread.thread_id, { values: { messages: [] } })).rejects.toThrow(/409/);
    await running;
  });

  test('debug checkpoint events name each checkpoint and its parent as the history does, and thread stream events carry ids', async () => {
    const thread = await app.client.threads.create();
    const events: Array<{ event: string; data: any; id?: string }> = [];
    for await (const event of app.client.runs.stream(thread.thread_id, 'agent', {
      input: say('debug me'),
      streamMode: 'debug',
    })) {
      events.push(event);
    }
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => String(index)));
    const streamed = events
      .filter((event) => event.event === 'debug' && event.data.type === 'checkpoint')
      .map((event) => event.data.payload);
    const history = (await app.client.threads.getHistory(thread.thread_id, { limit: 100 })).reverse();
    const names = (state: any) => ({ step: state.metadata.step, checkpoint: state.checkpoint, parent: state.parent_checkpoint });
    expect(streamed.map(names)).toEqual(history.map(names));
    expect(streamed[1].parent_config.configurable.checkpoint_id).toBe(history[0]!.checkpoint.checkpoint_id);
    expect(streamed[1]).not.toHaveProperty('parentConfig');
  });

  test('a thread created with supersteps has one checkpoint per superstep, as a run would have left them', async () => {
    const ran = await app.client.threads.create();
    await app.client.runs.wait(ran.thread_id, 'agent', { input: say('replayed') });
    const original = await app.client.threads.getHistory(ran.thread_id, { limit: 100 });
    const [, start, afterAgent, afterTools] = [...original].reverse().map((state: any) => state.values);
    const clone = await app.client.threads.create({
      graphId: 'agent',
      supersteps: [
        { updates: [{ asNode: '__input__', values: { messages: start.messages } }] },
        { updates: [{ asNode: '__start__', values: { messages: start.messages } }] },
        { updates: [{ asNode: 'agent', values: { messages: [afterAgent.messages.at(-1)] } }] },
        { updates: [{ asNode: 'tools', values: { messages: [afterTools.messages.at(-1)] } }] },
      ],
    });
    const cloned = await app.client.threads.getHistory(clone.thread_id, { limit: 100 });
    const shape = (state: any) => ({ next: state.next, values: state.values });
    expect(cloned.map(shape)).toEqual(original.map(shape));
    expect(texts((await app.client.threads.get(clone.thread_id)).values)).toEqual(['replayed', 'echo: replayed', 'ok']);

    const noGraph = await fetch(`${app.runtime.url}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ supersteps: [{ updates: [{ as_node: '__input__', values: {} }] }] }),
    });
    expect(noGraph.status).toBe(400);
    expect(((await noGraph.json()) as { detail: string }).detail).toMatch(/graph_id/);
  });

  test('copy duplicates a thread with its history, independent of the original', async () => {
    const thread = await app.client.threads.create({ metadata: { owner: 'copy-test' } });
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('original') });
    const copy = await app.client.threads.copy(thread.thread_id);
    expect(copy.thread_id).not.toBe(thread.thread_id);
    expect(copy.metadata).toMatchObject({ owner: 'copy-test', thread_id: copy.thread_id });
    const [original, copied] = await Promise.all([
      app.client.threads.getHistory(thread.thread_id, { limit: 100 }),
      app.client.threads.getHistory(copy.thread_id, { limit: 100 }),
    ]);
    expect(copied.map((state) => state.values)).toEqual(original.map((state) => state.values));
    await app.client.runs.wait(copy.thread_id, 'agent', { input: say('only in the copy') });
    expect(texts((await app.client.threads.getState(thread.thread_id)).values)).toEqual(['original', 'echo: original', 'ok']);
    expect(texts((await app.client.threads.getState(copy.thread_id)).values)).toHaveLength(6);
  });

  test('a run with a checkpoint forks the thread from that earlier point (regenerate)', async () => {
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('first') });
    const afterFirst = await app.client.threads.getState(thread.thread_id);
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('second') });

    const forked = await app.client.runs.wait(thread.thread_id, 'agent', {
      input: say('instead'),
      checkpoint: afterFirst.checkpoint,
    });
    expect(texts(forked)).toEqual(['first', 'echo: first', 'ok', 'instead', 'echo: instead', 'ok']);
    const head = await app.client.threads.getState(thread.thread_id);
    expect(head.parent_checkpoint).not.toBeNull();
    expect(texts(head.values)).toEqual(texts(forked));
  });

  test('interruptBefore and interruptAfter stop a run at a breakpoint, and a run with no input continues it', async () => {
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('careful'), interruptBefore: ['tools'] });
    expect(texts((await app.client.threads.getState(thread.thread_id)).values)).toEqual(['careful', 'echo: careful']);
    expect((await app.client.threads.get(thread.thread_id)).status).toBe('interrupted');
    expect((await app.client.threads.getState(thread.thread_id)).next).toEqual(['tools']);

    const continued = await app.client.runs.wait(thread.thread_id, 'agent', { input: null });
    expect(texts(continued)).toEqual(['careful', 'echo: careful', 'ok']);
    expect((await app.client.threads.get(thread.thread_id)).status).toBe('idle');

    const after = await app.client.threads.create();
    await app.client.runs.wait(after.thread_id, 'agent', { input: say('again'), interruptAfter: '*' });
    expect((await app.client.threads.getState(after.thread_id)).next).toEqual(['tools']);
    expect((await app.client.threads.get(after.thread_id)).status).toBe('interrupted');
  });

  test("history filters by a run's metadata: the checkpoints of that run only", async () => {
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('plain') });
    await app.client.runs.wait(thread.thread_id, 'agent', { input: say('tagged'), metadata: { run_tag: 'second' } });
    const all = await app.client.threads.getHistory(thread.thread_id, { limit: 100 });
    const tagged = await app.client.threads.getHistory(thread.thread_id, { limit: 100, metadata: { run_tag: 'second' } });
    expect(tagged.length).toBeGreaterThan(0);
    expect(tagged.length).toBeLessThan(all.length);
    expect(tagged.every((state) => state.metadata?.run_tag === 'second')).toBe(true);
    expect(texts(tagged.at(-1)!.values)).toEqual(['plain', 'echo: plain', 'ok']);
  });

  test('the events stream mode streams the run callback events beside the other modes', async () => {
    const thread = await app.client.threads.create();
    const chunks: Array<{ event: string; data: any }> = [];
    for await (const chunk of app.client.runs.stream(thread.thread_id, 'agent', {
      input: say('watch'),
      streamMode: ['events', 'values'],
    })) {
      chunks.push(chunk as { event: string; data: any });
    }
    expect(new Set(chunks.map((chunk) => chunk.event))).toEqual(new Set(['metadata', 'events', 'values']));
    const kinds = new Set(chunks.filter((chunk) => chunk.event === 'events').map((chunk) => chunk.data.event));
    // Python's nodes are runnables that report their output as a stream event too (as the Python server shows).
    const nodeEvents = language === 'python' ? ['on_chain_stream'] : [];
    expect(kinds).toEqual(new Set(['on_chain_start', 'on_chain_end', ...nodeEvents]));
    expect(texts(chunks.filter((chunk) => chunk.event === 'values').at(-1)!.data)).toEqual(['watch', 'echo: watch', 'ok']);
    expect((await app.client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  test('prune keep_latest leaves each thread only its current state; prune delete removes threads; both count what they pruned', async () => {
    const kept = await app.client.threads.create();
    await app.client.runs.wait(kept.thread_id, 'agent', { input: say('one') });
    await app.client.runs.wait(kept.thread_id, 'agent', { input: say('two') });
    const gone = await app.client.threads.create();
    const prune = async (body: unknown) => {
      const response = await fetch(`${app.runtime.url}/threads/prune`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };

    expect(await prune({ thread_ids: [kept.thread_id, crypto.randomUUID()], strategy: 'keep_latest' })).toEqual({
      status: 200,
      body: { pruned_count: 1 },
    });
    const history = await app.client.threads.getHistory(kept.thread_id, { limit: 100 });
    expect(history).toHaveLength(1);
    expect(texts(history[0]!.values)).toEqual(['one', 'echo: one', 'ok', 'two', 'echo: two', 'ok']);
    const next = await app.client.runs.wait(kept.thread_id, 'agent', { input: say('three') });
    expect(texts(next).slice(-3)).toEqual(['three', 'echo: three', 'ok']);

    expect(await prune({ thread_ids: [gone.thread_id] })).toEqual({ status: 200, body: { pruned_count: 1 } });
    await expect(app.client.threads.get(gone.thread_id)).rejects.toThrow(/404/);
    expect((await prune({ thread_ids: [] })).status).toBe(422);
    expect((await prune({ thread_ids: [kept.thread_id], strategy: 'all' })).status).toBe(422);
  });
});
