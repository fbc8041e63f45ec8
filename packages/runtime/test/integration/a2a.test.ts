/**
 * A2A (JSON-RPC 2.0) on an assistant of `graphx dev` (the echo app, in each graph language): the agent card,
 * `message/send` answering a completed task with the graph's answer, a second message on the same context continuing
 * the thread, an interrupt as `input-required` resumed by the next message, `message/stream` as SSE of JSON-RPC
 * envelopes, `tasks/get`, and the JSON-RPC errors.
 */
import { devAppForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const app = devAppForSuite('a2a', fixtureIn('runtime-echo', language));
  let runtime: { url: string };

  beforeAll(() => {
    runtime = app.runtime;
  });

  const rpc = async (assistant: string, method: string, params: unknown, id: number | string = 1) =>
    (await (
      await fetch(`${runtime.url}/a2a/${assistant}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      })
    ).json()) as any;
  const message = (text: string, contextId?: string) => ({
    message: {
      role: 'user',
      kind: 'message',
      messageId: `m-${text}`,
      parts: [{ kind: 'text', text }],
      ...(contextId ? { contextId } : {}),
    },
  });

  test('the agent card names the assistant, its JSON-RPC URL and streaming', async () => {
    const card = (await (await fetch(`${runtime.url}/a2a/agent/.well-known/agent-card.json`)).json()) as any;
    expect(card).toMatchObject({ name: 'agent', url: `${runtime.url}/a2a/agent`, capabilities: { streaming: true } });
    expect((await fetch(`${runtime.url}/a2a/nope/.well-known/agent-card.json`)).status).toBe(404);
  });

  test('message/send answers a completed task with the answer; the context carries the thread on', async () => {
    const first = await rpc('agent', 'message/send', message('hello'));
    expect(first).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { kind: 'task', id: expect.any(String), contextId: expect.any(String), status: { state: 'completed' } },
    });
    expect(first.result.artifacts[0].parts).toEqual([{ kind: 'text', text: 'echo: hello' }]);
    const second = await rpc('agent', 'message/send', message('again', first.result.contextId), 'two');
    expect(second.id).toBe('two');
    expect(second.result.contextId).toBe(first.result.contextId);
    const state = (await (await fetch(`${runtime.url}/threads/${first.result.contextId}/state`)).json()) as any;
    expect(state.values.messages.map((m: any) => m.content)).toEqual([
      'hello',
      'echo: hello',
      'ok',
      'again',
      'echo: again',
      'ok',
    ]);
    const got = await rpc('agent', 'tasks/get', { id: first.result.id });
    expect(got.result).toMatchObject({ id: first.result.id, status: { state: 'completed' } });
  });

  test('an interrupt is input-required, and the next message on the context resumes it', async () => {
    const asked = await rpc('interrupting', 'message/send', message('please'));
    expect(asked.result.status.state).toBe('input-required');
    const resumed = await rpc('interrupting', 'message/send', message('yes', asked.result.contextId));
    expect(resumed.result.status.state).toBe('completed');
    expect(resumed.result.artifacts[0].parts[0].text).toBe('answer: yes');
  });

  test('message/stream sends JSON-RPC envelopes as SSE: working, the artifact, the final status', async () => {
    const response = await fetch(`${runtime.url}/a2a/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'message/stream', params: message('streamed') }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const envelopes = (await response.text())
      .split('\n\n')
      .filter((frame) => frame.includes('data: '))
      .map((frame) =>
        JSON.parse(
          frame
            .split('\n')
            .find((line) => line.startsWith('data: '))!
            .slice(6),
        ),
      );
    expect(envelopes.map((envelope) => [envelope.id, envelope.result.kind])).toEqual([
      [9, 'status-update'],
      [9, 'artifact-update'],
      [9, 'status-update'],
    ]);
    expect(envelopes[1].result.artifact.parts[0].text).toBe('echo: streamed');
    expect(envelopes[2].result).toMatchObject({ final: true, status: { state: 'completed' } });
  });

  test('JSON-RPC errors: unknown method, tasks/cancel, unknown task, bad params, not JSON-RPC', async () => {
    expect((await rpc('agent', 'tasks/resubscribe', {})).error.code).toBe(-32601);
    expect((await rpc('agent', 'tasks/cancel', { id: 'x' })).error.code).toBe(-32004);
    expect((await rpc('agent', 'tasks/get', { id: '00000000-0000-4000-8000-000000000000' })).error.code).toBe(-32001);
    expect((await rpc('agent', 'message/send', { message: { parts: [] } })).error.code).toBe(-32602);
    const notRpc = await fetch(`${runtime.url}/a2a/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(((await notRpc.json()) as any).error.code).toBe(-32600);
  });
});
