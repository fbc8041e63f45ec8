/**
 * Protocol v2 on a thread over loopback against `graphx dev` (the chat app: a fake chat model streaming tokens, an
 * interrupt when asked): the SSE event stream (`POST /threads/{id}/stream/events`, `since`), the command endpoint and
 * its error codes, and the WebSocket transport (`ws` as the client), with two instances sharing one database.
 */
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { devAppsForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

interface WireEvent {
  type: 'event';
  seq: number;
  event_id: string;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: any };
}

// The chat app and its Python twin: the wire is the same whatever the graph's language.
describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  // Two instances over one database, started together as a revision's are.
  const apps = devAppsForSuite('protocol', fixtureIn('runtime-chat', language), { count: 2 });
  const instance = (index: number) => apps.runtimes[index]!;

  async function command(url: string, threadId: string, id: number, method: string, params: Record<string, unknown>) {
    const response = await fetch(`${url}/threads/${threadId}/commands`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, method, params }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** Opens the SSE event stream and collects frames until `until` says stop (or 10 s pass). */
  async function events(
    url: string,
    threadId: string,
    body: Record<string, unknown>,
    until: (events: WireEvent[]) => boolean,
    started?: () => Promise<void>,
  ) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 10_000);
    const response = await fetch(`${url}/threads/${threadId}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const frames: Array<{ id: string; event: string; data: WireEvent; raw: string }> = [];
    const reader = response.body!.getReader();
    await started?.();
    let text = '';
    try {
      while (!until(frames.map((frame) => frame.data))) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (block.startsWith(':')) continue;
          const fields = Object.fromEntries(
            block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
          );
          frames.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data!), raw: fields.data! });
        }
      }
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    return frames;
  }

  /** A message's text: its content string, or its text blocks joined (the protocol's AI messages carry blocks). */
  const contentText = (message: any): string =>
    typeof message.content === 'string' ? message.content : message.content.map((block: any) => block.text ?? '').join('');

  const rootEnd = (list: WireEvent[]) =>
    list.some(
      (event) => event.method === 'lifecycle' && event.params.namespace.length === 0 && event.params.data.event !== 'running',
    );
  const text = (list: WireEvent[]) =>
    list
      .filter((event) => event.method === 'messages' && event.params.data.event === 'content-block-delta')
      .map((event) => event.params.data.delta.text)
      .join('');

  test('a stream opened on a new thread id sees run.start create it and stream tokens, values and the end of the run', async () => {
    const threadId = crypto.randomUUID();
    let started: any;
    const frames = await events(
      instance(0).url,
      threadId,
      { channels: ['values', 'messages', 'lifecycle', 'input', 'updates', 'checkpoints', 'tasks'] },
      rootEnd,
      async () => {
        started = await command(instance(0).url, threadId, 1, 'run.start', {
          assistant_id: 'chat',
          input: { messages: [{ role: 'user', content: 'hello' }] },
        });
      },
    );
    // The root lifecycle ends once the run is over: when `completed` arrives, the thread is free and holds the answer.
    const thread = (await (await fetch(`${instance(0).url}/threads/${threadId}`)).json()) as any;
    expect(thread.status).toBe('idle');
    expect(thread.values.messages).toHaveLength(2);
    expect(started).toEqual({
      status: 200,
      body: { type: 'success', id: 1, result: { run_id: expect.any(String) }, meta: { thread_id: threadId } },
    });
    const list = frames.map((frame) => frame.data);
    // SSE: `id:` is the event's seq, `event:` its method, the data the whole event; seq grows.
    for (const frame of frames) expect([frame.id, frame.event]).toEqual([frame.data.event_id, frame.data.method]);
    expect(list.map((event) => event.seq)).toEqual([...list.map((event) => event.seq)].sort((a, b) => a - b));
    expect(list[0]).toMatchObject({
      type: 'event',
      method: 'lifecycle',
      params: { namespace: [], data: { event: 'running', graph_name: 'chat' } },
    });
    expect(list.at(-1)).toMatchObject({ method: 'lifecycle', params: { namespace: [], data: { event: 'completed' } } });
    expect(text(list)).toBe('You said: hello.');
    const lastValues = list.filter((event) => event.method === 'values' && event.params.namespace.length === 0).at(-1)!;
    expect(lastValues.params.data.messages.map((message: any) => [message.type, contentText(message)])).toEqual([
      ['human', 'hello'],
      ['ai', 'You said: hello.'],
    ]);
    // The run's frames, in the same order and shapes whatever the graph's language: each step's checkpoint envelope
    // before its values, a node's task before and after its update, tokens with the node and the chat model's run id.
    expect(
      list.filter((event) => event.method !== 'messages' && event.params.namespace.length === 0).map((event) => event.method),
    ).toEqual(['lifecycle', 'checkpoints', 'values', 'tasks', 'updates', 'tasks', 'checkpoints', 'values', 'lifecycle']);
    const [firstCheckpoint, secondCheckpoint] = list.filter((event) => event.method === 'checkpoints');
    expect(firstCheckpoint!.params.data).toEqual({
      id: expect.any(String),
      parent_id: expect.any(String),
      step: 0,
      source: 'loop',
    });
    expect(secondCheckpoint!.params.data).toEqual({
      id: expect.any(String),
      parent_id: firstCheckpoint!.params.data.id,
      step: 1,
      source: 'loop',
    });
    const [taskStart, taskEnd] = list.filter((event) => event.method === 'tasks');
    expect(taskStart!.params.data).toMatchObject({ id: expect.any(String), name: 'respond', triggers: ['branch:to:respond'] });
    expect(taskEnd!.params.data).toMatchObject({ id: taskStart!.params.data.id, name: 'respond', error: null, interrupts: [] });
    const update = list.find((event) => event.method === 'updates')!;
    expect(update.params).toMatchObject({ node: 'respond', data: { messages: [{ type: 'ai' }] } });
    expect(contentText(update.params.data.messages[0])).toBe('You said: hello.');
    const tokens = list.filter((event) => event.method === 'messages');
    expect(tokens[0]!.params.data).toMatchObject({ event: 'message-start', id: expect.any(String) });
    expect(tokens.at(-1)!.params.data).toMatchObject({ event: 'message-finish' });
    for (const token of tokens) {
      expect(token.params.node).toBe('respond');
      expect(token.params.data.run_id).toEqual(tokens[0]!.params.data.run_id);
    }

    // `since` resumes after an event: only the later ones come again, on the other instance too.
    const cut = list[2]!.seq;
    const resumed = await events(
      instance(1).url,
      threadId,
      { channels: ['values', 'messages', 'lifecycle', 'input', 'updates', 'checkpoints', 'tasks'], since: cut },
      rootEnd,
    );
    expect(resumed.map((frame) => frame.data.seq)).toEqual(list.filter((event) => event.seq > cut).map((event) => event.seq));
    // Byte for byte: the live events were handed over by the instance that wrote them, the resumed ones read back.
    expect(resumed.map((frame) => frame.raw)).toEqual(frames.filter((frame) => frame.data.seq > cut).map((frame) => frame.raw));
    // A filter by channel: lifecycle only.
    const lifecycle = await events(instance(1).url, threadId, { channels: ['lifecycle'] }, rootEnd);
    expect(new Set(lifecycle.map((frame) => frame.event))).toEqual(new Set(['lifecycle']));
  });

  test('an interrupt arrives as input.requested; input.respond resumes it, and the error codes name what is wrong', async () => {
    const threadId = crypto.randomUUID();
    const asked = await events(instance(0).url, threadId, { channels: ['input', 'lifecycle'] }, rootEnd, async () => {
      await command(instance(0).url, threadId, 1, 'run.start', {
        assistant_id: 'chat',
        input: { messages: [{ role: 'user', content: 'ask me' }] },
      });
    });
    const request = asked.map((frame) => frame.data).find((event) => event.method === 'input.requested')!;
    expect(request.params.data).toEqual({ interrupt_id: expect.any(String), payload: { question: 'Which colour?' } });
    expect(asked.at(-1)!.data.params.data.event).toBe('interrupted');

    const wrong = await command(instance(0).url, threadId, 2, 'input.respond', { interrupt_id: 'nope', response: 'red' });
    expect(wrong.body).toMatchObject({ type: 'error', id: 2, error: 'no_such_interrupt' });
    const seenBefore = asked.at(-1)!.data.seq;
    const answered = await events(
      instance(1).url,
      threadId,
      { channels: ['messages', 'lifecycle'], since: seenBefore },
      rootEnd,
      async () => {
        const ok = await command(instance(1).url, threadId, 3, 'input.respond', {
          namespace: [],
          interrupt_id: request.params.data.interrupt_id,
          response: 'red',
        });
        expect(ok.body).toMatchObject({ type: 'success', id: 3 });
      },
    );
    expect(text(answered.map((frame) => frame.data))).toBe('You chose red.');
    expect(answered.at(-1)!.data.params.data.event).toBe('completed');

    const state = await command(instance(0).url, threadId, 4, 'state.get', { namespace: [] });
    expect(state.body.result.values.messages.map(contentText)).toEqual(['ask me', 'You chose red.']);
    expect(state.body.result.checkpoint).toEqual({ id: expect.any(String), ns: '' });
    expect(
      (
        await command(instance(0).url, threadId, 5, 'input.respond', {
          interrupt_id: request.params.data.interrupt_id,
          response: 'x',
        })
      ).body,
    ).toMatchObject({ type: 'error', id: 5, error: 'no_such_run' });
    expect((await command(instance(0).url, threadId, 6, 'run.start', { input: {} })).body).toMatchObject({
      type: 'error',
      error: 'invalid_argument',
    });
    expect((await command(instance(0).url, threadId, 7, 'run.launch', {})).body).toMatchObject({
      type: 'error',
      id: 7,
      error: 'unknown_command',
    });
    const malformed = await fetch(`${instance(0).url}/threads/${threadId}/commands`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'run.start' }),
    });
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toMatchObject({
      detail: [{ loc: ['body'], type: 'invalid_argument' }],
      type: 'error',
      error: 'invalid_argument',
    });
    const badChannel = await fetch(`${instance(0).url}/threads/${threadId}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: ['debug'] }),
    });
    expect(badChannel.status).toBe(422);
  });

  test('run.start with input on an interrupted thread resumes it; on an idle one the input is a new message', async () => {
    const threadId = crypto.randomUUID();
    let seen: number | undefined;
    const ask = async (url: string, id: number, input: unknown) => {
      let started: any;
      // From after the last event seen: without `since` a stream starts with the thread's latest run.
      const body = { channels: ['messages', 'lifecycle', 'input'], ...(seen === undefined ? {} : { since: seen }) };
      const frames = await events(url, threadId, body, rootEnd, async () => {
        started = await command(url, threadId, id, 'run.start', { assistant_id: 'chat', input });
      });
      expect(started.body).toMatchObject({ type: 'success', id, result: { run_id: expect.any(String) } });
      const run = (await (await fetch(`${url}/threads/${threadId}/runs/${started.body.result.run_id}`)).json()) as any;
      const list = frames.map((frame) => frame.data);
      seen = list.at(-1)!.seq;
      return { text: text(list), end: list.at(-1)!.params.data.event, kwargs: run.kwargs };
    };
    // The thread made by run.start, stopped at its question.
    const asked = await ask(instance(0).url, 1, { messages: [{ role: 'user', content: 'ask me' }] });
    expect(asked.end).toBe('interrupted');
    // Sent to the other instance: the thread is interrupted, so the input is the resume value (recorded as the command).
    const resumed = await ask(instance(1).url, 2, 'green');
    expect(resumed).toMatchObject({ text: 'You chose green.', end: 'completed' });
    expect(resumed.kwargs).toMatchObject({ command: { resume: 'green' } });
    expect(resumed.kwargs.input).toBeUndefined();
    // Idle now: the same kind of call is a new turn.
    const next = await ask(instance(0).url, 3, { messages: [{ role: 'user', content: 'thanks' }] });
    expect(next).toMatchObject({ text: 'You said: thanks.', end: 'completed' });
    expect(next.kwargs).toMatchObject({ input: { messages: [{ role: 'user', content: 'thanks' }] } });
    expect(next.kwargs.command).toBeUndefined();
    const state = await command(instance(1).url, threadId, 4, 'state.get', { namespace: [] });
    expect(state.body.result.values.messages.map(contentText)).toEqual([
      'ask me',
      'You chose green.',
      'thanks',
      'You said: thanks.',
    ]);
  });

  test('over a WebSocket: subscribe, run.start, the subscribed events, agent.getTree and unsubscribe', async () => {
    const threadId = crypto.randomUUID();
    const socket = new WebSocket(`${instance(0).url.replace('http', 'ws')}/threads/${threadId}/stream/events`);
    const received: any[] = [];
    const waiters: Array<() => void> = [];
    socket.on('message', (data) => {
      received.push(JSON.parse(String(data)));
      for (const wake of waiters.splice(0)) wake();
    });
    const next = async (predicate: (message: any) => boolean) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = received.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`timed out; received ${JSON.stringify(received.slice(-5))}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    };
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ id: 1, method: 'subscription.subscribe', params: { channels: ['messages', 'lifecycle'] } }));
    const ack = await next((message) => message.id === 1);
    expect(ack).toEqual({ type: 'success', id: 1, result: { subscription_id: expect.any(String), replayed_events: 0 } });
    socket.send(
      JSON.stringify({
        id: 2,
        method: 'run.start',
        params: { assistant_id: 'chat', input: { messages: [{ role: 'user', content: 'ws' }] } },
      }),
    );
    expect(await next((message) => message.id === 2)).toMatchObject({ type: 'success', result: { run_id: expect.any(String) } });
    await next(
      (message) =>
        message.type === 'event' &&
        message.method === 'lifecycle' &&
        message.params.namespace.length === 0 &&
        message.params.data.event === 'completed',
    );
    const eventsSeen = received.filter((message) => message.type === 'event');
    expect(new Set(eventsSeen.map((event) => event.method))).toEqual(new Set(['lifecycle', 'messages']));
    expect(text(eventsSeen)).toBe('You said: ws.');
    socket.send(JSON.stringify({ id: 3, method: 'agent.getTree', params: {} }));
    expect((await next((message) => message.id === 3)).result.tree).toMatchObject({
      namespace: [],
      graph_name: 'chat',
      status: 'completed',
    });
    // A second subscription replays the run so far (values were never sent on this connection).
    socket.send(JSON.stringify({ id: 4, method: 'subscription.subscribe', params: { channels: ['values'] } }));
    const replay = await next((message) => message.id === 4);
    expect(replay.result.replayed_events).toBeGreaterThan(0);
    socket.send(JSON.stringify({ id: 5, method: 'subscription.unsubscribe', params: { subscription_id: 'nope' } }));
    expect(await next((message) => message.id === 5)).toMatchObject({ type: 'error', error: 'no_such_subscription' });
    socket.send('{not json');
    expect(await next((message) => message.type === 'error' && message.id === null)).toMatchObject({ error: 'invalid_argument' });
    socket.close();
  });

  test('a tool-calling graph streams its tool call on tools, its progress on custom and its whole messages as message events', async () => {
    const threadId = crypto.randomUUID();
    const frames = await events(
      instance(0).url,
      threadId,
      { channels: ['values', 'messages', 'lifecycle', 'tools', 'custom'] },
      rootEnd,
      async () => {
        await command(instance(0).url, threadId, 1, 'run.start', {
          assistant_id: 'tools',
          input: { messages: [{ role: 'user', content: 'add 1 and 2' }] },
        });
      },
    );
    const list = frames.map((frame) => frame.data);
    expect(list.at(-1)).toMatchObject({ method: 'lifecycle', params: { namespace: [], data: { event: 'completed' } } });
    const toolEvents = list.filter((event) => event.method === 'tools').map((event) => event.params.data);
    expect(toolEvents).toMatchObject([
      { event: 'tool-started', tool_call_id: 'call-1', tool_name: 'add' },
      { event: 'tool-finished', tool_call_id: 'call-1' },
    ]);
    expect(list.filter((event) => event.method === 'custom').map((event) => event.params.data)).toEqual([
      { name: 'progress', step: 'calling add' },
    ]);
    // The agent's answers are whole messages (no model streams them): each comes as its message events.
    expect(text(list)).toBe('The sum is 3.');
    const lastValues = list.filter((event) => event.method === 'values' && event.params.namespace.length === 0).at(-1)!;
    expect(lastValues.params.data.messages.map((message: any) => message.type)).toEqual(['human', 'ai', 'tool', 'ai']);
  });

  // Last: it stops the second instance (the suite's end stops it again, which is then a no-op).
  test('a stopping instance closes its open protocol sockets with 1012 and exits', async () => {
    const socket = new WebSocket(`${instance(1).url.replace('http', 'ws')}/threads/${crypto.randomUUID()}/stream/events`);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    const exited = instance(1).stop();
    expect(await closed).toBe(1012);
    expect(await exited).toBe(0);
  }, 20_000);
});
