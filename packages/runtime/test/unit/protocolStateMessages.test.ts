/**
 * Messages in protocol-v2 `values` and `updates`: each LangChain message becomes `{type, content, …}` with only the
 * fields that are set, whatever way the message was made (constructor fields, an id given later by the messages
 * reducer, tool calls, a tool's status and artifact, response metadata), and a later change to a message's property
 * shows in the next event. The expected dicts are what the message's own `toDict()` says, cut to the protocol's
 * fields, so a message class that stores a field elsewhere would fail here.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { messagesStateReducer } from '@langchain/langgraph';
import { protocolState } from '../../src/execution/protocolFrames';

const PROTOCOL_TYPES: Record<string, string> = { human: 'human', ai: 'ai', tool: 'tool', system: 'system' };

/** The protocol's shape of `message`, taken from toDict(). */
function fromToDict(message: BaseMessage): Record<string, unknown> {
  const data = message.toDict().data as Record<string, any>;
  const out: Record<string, unknown> = { type: PROTOCOL_TYPES[message.getType()], content: data.content ?? '' };
  for (const key of ['id', 'name', 'tool_call_id', 'status', 'artifact']) if (data[key] != null) out[key] = data[key];
  if (data.response_metadata && Object.keys(data.response_metadata).length > 0) out.response_metadata = data.response_metadata;
  if (message.getType() === 'ai') {
    if (data.tool_calls?.length) {
      out.tool_calls = data.tool_calls.map((call: any) => ({ id: call.id, name: call.name, args: call.args, type: 'tool_call' }));
    }
    if (data.invalid_tool_calls?.length) out.invalid_tool_calls = data.invalid_tool_calls;
  }
  return out;
}

describe('protocolState: messages in the protocol shape', () => {
  const messages = (): BaseMessage[] => [
    new SystemMessage('be brief'),
    new HumanMessage({ content: 'weather in Paris?', name: 'ada' }),
    new AIMessage({
      content: [{ type: 'text', text: 'checking' }],
      id: 'ai-1',
      tool_calls: [{ id: 'call-1', name: 'weather', args: { city: 'Paris' } }],
      response_metadata: { model_name: 'echo', finish_reason: 'tool_calls' },
    }),
    new ToolMessage({ content: '18 °C', tool_call_id: 'call-1', status: 'error', artifact: { raw: [1, 2] } }),
    new AIMessage({
      content: 'half a call',
      invalid_tool_calls: [{ id: 'call-2', name: 'weather', args: '{"city":', error: 'bad json', type: 'invalid_tool_call' }],
    }),
    new AIMessage(''),
  ];

  test('each message has the fields its toDict() carries, and no others', () => {
    // The reducer gives each message without an id a new one, as in a graph's state.
    const state = { messages: messagesStateReducer([], messages()), step: 3 };
    const shaped = protocolState(state) as { messages: Array<Record<string, unknown>>; step: number };
    expect(shaped.step).toBe(3);
    expect(shaped.messages).toEqual(state.messages.map(fromToDict));
    expect(shaped.messages.every((message) => typeof message.id === 'string')).toBe(true);
    expect(shaped.messages[1]).toEqual({ type: 'human', content: 'weather in Paris?', id: expect.any(String), name: 'ada' });
    expect(shaped.messages[3]).toMatchObject({
      type: 'tool',
      tool_call_id: 'call-1',
      status: 'error',
      artifact: { raw: [1, 2] },
    });
    expect(Object.keys(shaped.messages[5]!).sort()).toEqual(['content', 'id', 'type']);
  });

  test('an update of messages alone, and a message changed between two events', () => {
    const [human] = messagesStateReducer([], [new HumanMessage('first')]);
    expect(protocolState([human])).toEqual([{ type: 'human', content: 'first', id: human!.id }]);
    human!.content = 'edited';
    expect(protocolState({ messages: [human] })).toEqual({ messages: [{ type: 'human', content: 'edited', id: human!.id }] });
  });

  test('interrupts are left out and plain dict messages pass through in the protocol shape', () => {
    const shaped = protocolState({
      messages: [{ role: 'user', content: 'hi', id: 'u1', name: null }],
      __interrupt__: [{ id: 'i1', value: 'approve?' }],
    });
    expect(shaped).toEqual({ messages: [{ type: 'human', content: 'hi', id: 'u1' }] });
  });

  test('an item whose type is no message type stays as it is, even a name every object inherits', () => {
    const items = [{ type: 'constructor', content: 'x' }, { role: 'toString' }, { type: 'checkpoint', id: 'c1' }, 'text', 7];
    expect(protocolState({ messages: items })).toEqual({ messages: items });
  });
});
