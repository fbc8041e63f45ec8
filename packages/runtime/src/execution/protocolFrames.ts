/**
 * Protocol v2 events of one run (`@langchain/protocol`: channels values, updates, messages, tools, lifecycle, input,
 * checkpoints, tasks, custom and `custom:<name>`). The app's own LangGraph makes them: `streamEvents(…, {version:
 * "v3"})` turns its stream into protocol events (messages as message-start / content-block deltas, tools, subgraph
 * lifecycle). What the library cannot know is the server's, as the reference server does it: the root lifecycle
 * (running at the start; completed, interrupted or failed at the end), interrupts as `input.requested` (one per
 * interrupt id, and no `__interrupt__` in `values`), an update's node beside its values, and state messages in the
 * protocol's message shape.
 *
 * Each event is kept as one row of the run's events (RunEvents) named `protocol:<method>` with its `params`; the row's
 * id is the event's `seq` on the wire (protocol/wireEvents.ts), so any instance serves it and `since` resumes it.
 */
import type { RunnableGraph } from '../graphs';
import type { GraphRunOutcome, StreamEvent } from './graphStream';
import { isMessage, type MessageLike } from './serialize';

export const PROTOCOL_EVENT_PREFIX = 'protocol:';

export interface ProtocolParams {
  namespace: string[];
  timestamp: number;
  node?: string;
  data: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The protocol method of a kept event's name (`protocol:<method>`), null for another event. */
export function protocolMethodOf(eventName: string): string | null {
  return eventName.startsWith(PROTOCOL_EVENT_PREFIX) ? eventName.slice(PROTOCOL_EVENT_PREFIX.length) : null;
}

/**
 * A protocol event of the run. Its params' keys are the wire event's params in the wire's order (nothing else), so
 * their wire JSON, as written, is the text a follower sends (protocol/wireEvents.ts `wireFrameOf`).
 */
export function protocolEvent(method: string, namespace: string[], data: unknown, node?: string): StreamEvent {
  const params: ProtocolParams = { namespace, timestamp: Date.now(), ...(node !== undefined ? { node } : {}), data };
  return { event: `${PROTOCOL_EVENT_PREFIX}${method}`, data: params };
}

const MESSAGE_TYPES: Record<string, string> = {
  assistant: 'ai',
  user: 'human',
  human: 'human',
  ai: 'ai',
  tool: 'tool',
  system: 'system',
};

/** The fields of a LangChain message that the protocol's shape can carry, read from the message itself. */
const MESSAGE_FIELDS = [
  'content',
  'id',
  'name',
  'tool_call_id',
  'status',
  'artifact',
  'response_metadata',
  'tool_calls',
  'invalid_tool_calls',
] as const;

/**
 * A LangChain message's fields as a dict. Read straight from the message: `toDict()` serialises all of it (aliases,
 * secrets, escaping, key mapping) for every message of every `values` event, ~0.4 ms of a two-message run's CPU, and
 * the protocol's shape keeps only these fields, whose values are the message's own properties either way.
 */
function messageDict(message: MessageLike): Record<string, unknown> {
  const fields = message as unknown as Record<string, unknown>;
  const dict: Record<string, unknown> = { type: message.getType() };
  for (const key of MESSAGE_FIELDS) if (fields[key] !== undefined) dict[key] = fields[key];
  return dict;
}

/** A state message in the protocol's shape: `{type, content, id?, name?, tool_calls?, tool_call_id?, …}`. */
function stateMessage(value: unknown): unknown {
  const dict = isMessage(value) ? messageDict(value) : value;
  if (!isRecord(dict)) return value;
  const type = MESSAGE_TYPES[String(dict.type ?? dict.role)];
  if (!type) return value;
  const message: Record<string, unknown> = { type, content: dict.content ?? '' };
  // Only the fields that are set: a Python message (pydantic's dump) carries `name: null` and `artifact: null` where a
  // LangChain.js message has no field, and the protocol's shape must not tell the two apart.
  for (const key of ['id', 'name', 'tool_call_id', 'status', 'artifact']) if (dict[key] != null) message[key] = dict[key];
  if (isRecord(dict.response_metadata) && Object.keys(dict.response_metadata).length > 0) {
    message.response_metadata = dict.response_metadata;
  }
  if (type === 'ai') {
    if (Array.isArray(dict.tool_calls) && dict.tool_calls.length > 0) {
      message.tool_calls = dict.tool_calls.map((call: Record<string, unknown>) => ({
        id: call.id,
        name: call.name,
        args: call.args,
        type: 'tool_call',
      }));
    }
    if (Array.isArray(dict.invalid_tool_calls) && dict.invalid_tool_calls.length > 0)
      message.invalid_tool_calls = dict.invalid_tool_calls;
  }
  return message;
}

/** State values (or an update) with messages in the protocol's shape and interrupts left out. */
export function protocolState(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (isMessage(item) ? stateMessage(item) : item));
  if (!isRecord(value) || isMessage(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (key === '__interrupt__') continue;
    out[key] = key === 'messages' && Array.isArray(entry) ? entry.map(stateMessage) : entry;
  }
  return out;
}

/** `input.requested` data of each interrupt in `interrupts` (`[{id, value}]`). */
function inputRequests(interrupts: unknown): Array<{ interrupt_id: string; payload: unknown }> {
  if (!Array.isArray(interrupts)) return [];
  return interrupts
    .filter((item): item is Record<string, unknown> => isRecord(item) && typeof item.id === 'string')
    .map((item) => ({ interrupt_id: item.id as string, payload: item.value ?? null }));
}

/** The data of the root `lifecycle` event that ends a run with `outcome`. */
export function rootLifecycleEnd(outcome: GraphRunOutcome, graphName: string): Record<string, unknown> {
  if (outcome.status === 'error') return { event: 'failed', graph_name: graphName, error: outcome.error?.message ?? 'failed' };
  return { event: outcome.status === 'interrupted' || outcome.interrupted ? 'interrupted' : 'completed', graph_name: graphName };
}

/** A protocol event as the library makes it (`{type, seq, method, params}`). */
type LibraryProtocolEvent = { method: string; params: { namespace: string[]; data?: unknown; node?: string } };

/**
 * The pieces of the app's own LangGraph.js (1.7 and later) that turn a graph's v3 stream into protocol events; null
 * when its release has none of them (its `streamEvents` v3 is used then).
 */
export interface ProtocolEventKit {
  convertToProtocolEvent(chunk: { namespace: string[]; mode: string; payload: unknown; seq: number }): LibraryProtocolEvent[];
  createLifecycleTransformer(): {
    init(): unknown;
    onRegister(handle: { push(namespace: string[], event: LibraryProtocolEvent): void }): void;
    process(event: LibraryProtocolEvent): boolean;
    finalize(): unknown;
    fail(error: unknown): void;
  };
  STREAM_EVENTS_V3_MODES: readonly string[];
}

/** The kit in a module's exports (the app's `@langchain/langgraph`), or null. */
export function protocolEventKitOf(library: Record<string, unknown>): ProtocolEventKit | null {
  const kit = library as Partial<ProtocolEventKit>;
  return typeof kit.convertToProtocolEvent === 'function' &&
    typeof kit.createLifecycleTransformer === 'function' &&
    Array.isArray(kit.STREAM_EVENTS_V3_MODES)
    ? (kit as ProtocolEventKit)
    : null;
}

/** What a LangGraph.js graph holds beside RunnableGraph that its v3 `streamEvents` reads. */
type LibraryGraph = RunnableGraph & {
  config?: { configurable?: Record<string, unknown>; recursionLimit?: number };
  streamTransformers?: unknown[];
};

/**
 * The library's protocol events of one run. Its `streamEvents(…, {version: "v3"})` feeds the graph's stream through a
 * mux that also builds the in-process projections of a run (a log of every event and of the values, a message object
 * per message, subgraph handles), which nothing here reads: ~0.25 ms of a small run's CPU, ~10 %. The wire needs only
 * what the mux passes on: each chunk converted, and the lifecycle transformer's events before the event that caused
 * them (it runs ahead of the others and is the only one that adds or drops events). That is done here with the app's
 * own library's pieces, in the same order, for a graph with no stream transformers of its own (theirs add channels
 * through the mux: such a graph, an older library or a graph held elsewhere uses `streamEvents` itself).
 */
async function* libraryProtocolEvents(
  graph: LibraryGraph,
  input: unknown,
  options: Record<string, unknown>,
  kit: ProtocolEventKit | null,
): AsyncGenerator<LibraryProtocolEvent> {
  if (!kit || (graph.streamTransformers?.length ?? 0) > 0) {
    yield* (await graph.streamEvents(input, { ...options, version: 'v3' })) as AsyncIterable<LibraryProtocolEvent>;
    return;
  }
  // The options `streamEvents` v3 passes to the graph's stream.
  const streamOptions = {
    recursionLimit: graph.config?.recursionLimit,
    ...options,
    configurable: { ...graph.config?.configurable, ...(options.configurable as Record<string, unknown> | undefined) },
    version: 'v3',
    streamMode: kit.STREAM_EVENTS_V3_MODES,
    subgraphs: true,
    encoding: undefined,
  };
  const lifecycle = kit.createLifecycleTransformer();
  const ready: LibraryProtocolEvent[] = [];
  lifecycle.init();
  // Its root `running` (pushed now) is dropped by the caller like the library's: the root's lifecycle is the server's.
  lifecycle.onRegister({ push: (_namespace, event) => ready.push(event) });
  try {
    const chunks = (await graph.stream(input, streamOptions)) as AsyncIterable<[string[], string, unknown]>;
    let seq = 0;
    for await (const [namespace, mode, payload] of chunks) {
      const events = kit.convertToProtocolEvent({ namespace, mode, payload, seq });
      seq += events.length;
      for (const event of events) if (lifecycle.process(event)) ready.push(event);
      yield* ready.splice(0);
    }
  } catch (error) {
    lifecycle.fail(error);
    yield* ready.splice(0);
    throw error;
  }
  await lifecycle.finalize();
  yield* ready.splice(0);
}

/**
 * Streams one run as protocol events (see the file's comment), without the root lifecycle's; fills `outcome` as
 * graphStream.ts does. A failure is noted in `outcome`, never thrown. `kit`: the app's library's pieces, when it has
 * them and the graph is the app's LangGraph.js graph.
 */
export async function* streamProtocol(
  graph: RunnableGraph,
  input: unknown,
  options: Record<string, unknown> & { signal: AbortSignal },
  outcome: GraphRunOutcome,
  kit: ProtocolEventKit | null = null,
): AsyncGenerator<StreamEvent> {
  const asked = new Set<string>();
  const requests = function* (namespace: string[], interrupts: unknown): Generator<StreamEvent> {
    for (const request of inputRequests(interrupts)) {
      if (asked.has(request.interrupt_id)) continue;
      asked.add(request.interrupt_id);
      outcome.interrupted = namespace.length === 0 || outcome.interrupted;
      yield protocolEvent('input.requested', namespace, request);
    }
  };
  try {
    for await (const item of libraryProtocolEvents(graph, input, options, kit)) {
      const method = String(item.method);
      const params = (item.params ?? {}) as { namespace?: string[]; data?: unknown; node?: string };
      const namespace = params.namespace ?? [];
      const data = params.data;
      if (method === 'lifecycle') {
        // The root's lifecycle is the server's (it knows how the run ended); a subgraph's is the library's.
        if (namespace.length > 0) yield protocolEvent('lifecycle', namespace, data);
      } else if (method === 'values') {
        if (isRecord(data) && '__interrupt__' in data) {
          yield* requests(namespace, data.__interrupt__);
          outcome.interrupted ||= namespace.length === 0;
          const rest = protocolState(data);
          if (isRecord(rest) && Object.keys(rest).length === 0) continue;
        } else if (namespace.length === 0) {
          outcome.finalValues = data;
        }
        yield protocolEvent('values', namespace, protocolState(data));
      } else if (method === 'updates') {
        const update = (isRecord(data) ? data : {}) as { node?: string; values?: unknown };
        if (update.node === '__interrupt__') yield* requests(namespace, update.values);
        else yield protocolEvent('updates', namespace, protocolState(update.values ?? {}), update.node);
      } else if (method.startsWith('custom:')) {
        yield protocolEvent('custom', namespace, { name: method.slice('custom:'.length), payload: data });
      } else {
        yield protocolEvent(method, namespace, data, params.node);
      }
    }
    outcome.status = outcome.interrupted ? 'interrupted' : 'success';
  } catch (error) {
    if (options.signal.aborted) {
      outcome.status = 'interrupted';
      return;
    }
    const failure = error as Error;
    outcome.status = 'error';
    outcome.error = { error: failure?.name || 'Error', message: failure?.message ?? String(error) };
  }
}
