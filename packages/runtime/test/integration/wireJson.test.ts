/** toWireJson (src/runtime/execution/serialize.ts) puts messages on the wire as dicts, wherever they are nested. */
import { AIMessage, AIMessageChunk, HumanMessage } from '@langchain/core/messages';
import { toWireJson } from '../../src/execution/serialize';

test('messages nested in objects, arrays and tuples become {...fields, type}, other values are plain JSON', () => {
  const when = new Date('2026-01-02T03:04:05.000Z');
  const value = {
    messages: [new HumanMessage({ id: 'h', content: 'hi' }), new AIMessage({ id: 'a', content: 'yo' })],
    tuple: [new AIMessageChunk({ id: 'c', content: 'to' }), { langgraph_node: 'agent' }],
    when,
    custom: { toJSON: () => ({ inner: new HumanMessage({ id: 'x', content: 'in toJSON' }) }) },
    skipped: undefined,
  };
  expect(JSON.parse(toWireJson(value))).toEqual({
    messages: [
      { id: 'h', content: 'hi', type: 'human', additional_kwargs: {}, response_metadata: {} },
      {
        id: 'a',
        content: 'yo',
        type: 'ai',
        additional_kwargs: {},
        response_metadata: {},
        tool_calls: [],
        invalid_tool_calls: [],
      },
    ],
    tuple: [expect.objectContaining({ id: 'c', content: 'to', type: 'ai', tool_call_chunks: [] }), { langgraph_node: 'agent' }],
    when: '2026-01-02T03:04:05.000Z',
    custom: { inner: expect.objectContaining({ id: 'x', content: 'in toJSON', type: 'human' }) },
  });
  expect(toWireJson(new HumanMessage({ id: 'top', content: 'bare' }))).toContain('"type":"human"');
  expect(value.messages[0]).toBeInstanceOf(HumanMessage);
});

test('a value nested deeper than the fast path still serialises, and a cycle still fails like JSON.stringify', () => {
  let deep: Record<string, unknown> = { message: new HumanMessage({ id: 'd', content: 'deep' }) };
  for (let level = 0; level < 100; level += 1) deep = { next: deep };
  let parsed = JSON.parse(toWireJson(deep));
  while (parsed.next) parsed = parsed.next;
  expect(parsed.message).toEqual({ id: 'd', content: 'deep', type: 'human', additional_kwargs: {}, response_metadata: {} });
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  expect(() => toWireJson(cycle)).toThrow(TypeError);
});
