/**
 * A LangGraph.js graph's protocol events are made from its stream with its library's own converter and lifecycle
 * transformer (protocolFrames.ts), not through `streamEvents(…, {version: "v3"})`'s mux. The wire must not tell the
 * two apart: here each graph runs once each way (same thread id, its own checkpointer) and the events, with ids and
 * times normalised, are equal, and so is how the run ended — streamed tokens, tools, custom writes, a subgraph's
 * lifecycle, an interrupt inside a subgraph and its resume, a failure inside a subgraph. A graph with a stream transformer of its own (a named custom
 * channel) still gets that channel, which only the library's mux makes.
 */
import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import * as library from '@langchain/langgraph';
import { Command, interrupt, MemorySaver, MessagesAnnotation, StateGraph, StreamChannel } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { RunnableGraph } from '../../src/graphs';
import type { GraphRunOutcome, StreamEvent } from '../../src/execution/graphStream';
import { protocolEventKitOf, streamProtocol, type ProtocolEventKit } from '../../src/execution/protocolFrames';

type State = typeof MessagesAnnotation.State;
const kit = protocolEventKitOf(library as unknown as Record<string, unknown>);

const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
  name: 'add',
  description: 'Adds two numbers.',
  schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
});

/** A chat model streaming tokens, a tool call and its result, a custom write. */
const agent = () =>
  new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state: State, config) => {
      const last = state.messages[state.messages.length - 1];
      if (last?.getType() === 'tool') {
        const model = new FakeListChatModel({ responses: [`The sum is ${String(last.content)}.`] });
        return { messages: [await model.invoke(state.messages, config)] };
      }
      config.writer?.({ step: 'calling add' });
      return { messages: [new AIMessage({ content: '', tool_calls: [{ id: 'call-1', name: 'add', args: { a: 1, b: 2 } }] })] };
    })
    .addNode('tools', new ToolNode([add]))
    .addEdge('__start__', 'agent')
    .addConditionalEdges('agent', (state: State) =>
      (state.messages[state.messages.length - 1] as AIMessage).tool_calls?.length ? 'tools' : '__end__',
    )
    .addEdge('tools', 'agent');

/** A parent whose subgraph asks a question (interrupt), or fails. */
const nested = (inner: (state: State) => Promise<Partial<State>> | Partial<State>) => {
  const child = new StateGraph(MessagesAnnotation).addNode('ask', inner).addEdge('__start__', 'ask').compile();
  return new StateGraph(MessagesAnnotation)
    .addNode('before', () => ({ messages: [new AIMessage({ id: 'before', content: 'thinking' })] }))
    .addNode('child', child)
    .addEdge('__start__', 'before')
    .addEdge('before', 'child');
};
const asking = () =>
  nested((state) => {
    const reply = interrupt({ question: `After ${state.messages.length} messages, which colour?` });
    return { messages: [new AIMessage({ id: 'answer', content: `You chose ${String(reply)}.` })] };
  });
const failing = () =>
  nested(() => {
    throw new Error('the subgraph broke');
  });

/** Every protocol event of each run, ids and times replaced by their order of first appearance. */
async function protocolEvents(
  build: () => StateGraph<any, any, any, any, any, any>,
  inputs: unknown[],
  withKit: ProtocolEventKit | null,
): Promise<{ events: string[]; outcomes: GraphRunOutcome[] }> {
  const graph = build().compile({ checkpointer: new MemorySaver() }) as unknown as RunnableGraph;
  const seen = new Map<string, string>();
  const events: string[] = [];
  const outcomes: GraphRunOutcome[] = [];
  for (const input of inputs) {
    const outcome: GraphRunOutcome = { status: 'success', finalValues: null, interrupted: false, error: null };
    const options = { configurable: { thread_id: 'thread-1' }, signal: new AbortController().signal };
    for await (const event of streamProtocol(graph, input, options, outcome, withKit)) events.push(normalised(event, seen));
    outcomes.push(JSON.parse(normalised(outcome, seen)) as GraphRunOutcome);
  }
  return { events, outcomes };
}

function normalised(event: StreamEvent | GraphRunOutcome, seen: Map<string, string>): string {
  return JSON.stringify(event)
    .replace(/"timestamp":\d+/g, '"timestamp":0')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|run-[0-9a-f-]+|\b[0-9a-f]{32}\b/g, (id) => {
      if (!seen.has(id)) seen.set(id, `id-${seen.size}`);
      return seen.get(id)!;
    });
}

const methods = (events: string[]) => events.map((event) => (JSON.parse(event) as { event: string }).event);

/** The graph's run(s) with the kit and through `streamEvents` v3: the same events and outcomes; the kit's are returned. */
async function bothWays(build: () => StateGraph<any, any, any, any, any, any>, inputs: unknown[]) {
  const direct = await protocolEvents(build, inputs, kit);
  const viaMux = await protocolEvents(build, inputs, null);
  expect(direct.events).toEqual(viaMux.events);
  expect(direct.outcomes).toEqual(viaMux.outcomes);
  return direct;
}

describe('protocol events from the app library converter equal streamEvents v3', () => {
  test('the installed LangGraph.js has the pieces', () => {
    expect(kit).not.toBeNull();
    expect(protocolEventKitOf({ Command: class {} })).toBeNull();
  });

  test('streamed tokens, a tool call and its result, a custom write', async () => {
    const input = { messages: [{ role: 'user', content: 'add 1 and 2' }] };
    const direct = await bothWays(agent, [input]);
    expect(methods(direct.events)).toEqual(
      expect.arrayContaining(['protocol:messages', 'protocol:tools', 'protocol:custom', 'protocol:tasks', 'protocol:lifecycle']),
    );
    expect(direct.events.join('\n')).toContain('"text":"The sum is 3."');
  });

  test("a subgraph's interrupt, its lifecycle and the resume", async () => {
    const inputs = [{ messages: [{ role: 'user', content: 'hi' }] }, new Command({ resume: 'blue' })];
    const direct = await bothWays(asking, inputs);
    expect(direct.outcomes.map((outcome) => outcome.status)).toEqual(['interrupted', 'success']);
    // The subgraph's lifecycle (the library's own account of it, which only its transformer makes) and the question.
    expect(direct.events.join('\n')).toContain('"data":{"event":"started","graph_name":"child"}');
    expect(direct.events.join('\n')).toContain('"payload":{"question":"After 2 messages, which colour?"}');
    expect(direct.events.join('\n')).toContain('"text":"You chose blue."');
  });

  test('a failure inside a subgraph', async () => {
    const input = { messages: [{ role: 'user', content: 'hi' }] };
    const direct = await bothWays(failing, [input]);
    expect(direct.outcomes[0]).toMatchObject({ status: 'error', error: { message: 'the subgraph broke' } });
    expect(direct.events.at(-1)).toContain('"event":"failed"');
  });

  test("a graph's own stream transformer still gets its named channel", async () => {
    const withChannel = () => {
      const builder = agent();
      const compile = builder.compile.bind(builder);
      builder.compile = ((options: Record<string, unknown>) =>
        compile({
          ...options,
          transformers: [
            () => {
              const progress = StreamChannel.remote<unknown>('progress');
              return {
                init: () => ({ progress }),
                process: (event: { method: string; params: { data: unknown } }) => {
                  if (event.method === 'custom') progress.push(event.params.data);
                  return true;
                },
              };
            },
          ],
        })) as typeof builder.compile;
      return builder;
    };
    const input = { messages: [{ role: 'user', content: 'add 1 and 2' }] };
    const direct = await bothWays(withChannel, [input]);
    const named = direct.events.filter((event) => event.includes('"name":"progress"'));
    expect(named).toHaveLength(1);
    expect(named[0]).toContain('"payload":{"step":"calling add"}');
  });
});
