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
import { isMessage } from './serialize';

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

/**
 * A message in the protocol's shape, `{type, content, id?, name?, tool_calls?, tool_call_id?, …}`, read from a
 * LangChain message's own properties (`type`: its `getType()`) or from a message dict (`type`: its `type` or `role`);
 * null when the type is not a message type. Only the fields that are set: a Python message (pydantic's dump) carries
 * `name: null` and `artifact: null` where a LangChain.js message has no field, and the protocol's shape must not tell
 * the two apart. Not `toDict()`: it serialises all of a message (aliases, secrets, escaping, key mapping) for every
 * message of every `values` event, and the shape keeps only these fields, whose values are the message's own
 * properties either way; each is read by name (not in a loop over names), since state messages are read for every
 * `values` event of a run, each time the whole list.
 */
function protocolMessage(rawType: unknown, fields: Record<string, unknown>): Record<string, unknown> | null {
  const type = typeof rawType === 'string' && Object.hasOwn(MESSAGE_TYPES, rawType) ? MESSAGE_TYPES[rawType] : undefined;
  if (!type) return null;
  const message: Record<string, unknown> = { type, content: fields.content ?? '' };
  if (fields.id != null) message.id = fields.id;
  if (fields.name != null) message.name = fields.name;
  if (fields.tool_call_id != null) message.tool_call_id = fields.tool_call_id;
  if (fields.status != null) message.status = fields.status;
  if (fields.artifact != null) message.artifact = fields.artifact;
  const metadata = fields.response_metadata;
  if (isRecord(metadata) && hasKeys(metadata)) message.response_metadata = metadata;
  if (type === 'ai') {
    const calls = fields.tool_calls;
    if (Array.isArray(calls) && calls.length > 0) {
      message.tool_calls = calls.map((call: Record<string, unknown>) => ({
        id: call.id,
        name: call.name,
        args: call.args,
        type: 'tool_call',
      }));
    }
    const invalid = fields.invalid_tool_calls;
    if (Array.isArray(invalid) && invalid.length > 0) message.invalid_tool_calls = invalid;
  }
  return message;
}

function hasKeys(record: Record<string, unknown>): boolean {
  for (const key in record) if (Object.hasOwn(record, key)) return true;
  return false;
}

/** A state message in the protocol's shape (protocolMessage); anything else as it is. */
function stateMessage(value: unknown): unknown {
  if (isMessage(value)) return protocolMessage(value.getType(), value as unknown as Record<string, unknown>) ?? value;
  if (!isRecord(value)) return value;
  return protocolMessage(value.type ?? value.role, value) ?? value;
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
 * The server's events for each of the library's (see the file's comment), appended to `out`; fills `outcome`'s
 * interrupt and final values. A function rather than a generator: the run's one async generator (streamProtocol)
 * yields them, and every generator between the graph and the wire costs each event a few promise turns.
 */
function serverEvents(outcome: GraphRunOutcome): (item: LibraryProtocolEvent, out: StreamEvent[]) => void {
  const asked = new Set<string>();
  const requests = (namespace: string[], interrupts: unknown, out: StreamEvent[]) => {
    for (const request of inputRequests(interrupts)) {
      if (asked.has(request.interrupt_id)) continue;
      asked.add(request.interrupt_id);
      outcome.interrupted = namespace.length === 0 || outcome.interrupted;
      out.push(protocolEvent('input.requested', namespace, request));
    }
  };
  return (item, out) => {
    const method = String(item.method);
    const params = (item.params ?? {}) as { namespace?: string[]; data?: unknown; node?: string };
    const namespace = params.namespace ?? [];
    const data = params.data;
    if (method === 'lifecycle') {
      // The root's lifecycle is the server's (it knows how the run ended); a subgraph's is the library's.
      if (namespace.length > 0) out.push(protocolEvent('lifecycle', namespace, data));
    } else if (method === 'values') {
      if (isRecord(data) && '__interrupt__' in data) {
        requests(namespace, data.__interrupt__, out);
        outcome.interrupted ||= namespace.length === 0;
        const rest = protocolState(data);
        if (isRecord(rest) && Object.keys(rest).length === 0) return;
      } else if (namespace.length === 0) {
        outcome.finalValues = data;
      }
      out.push(protocolEvent('values', namespace, protocolState(data)));
    } else if (method === 'updates') {
      const update = (isRecord(data) ? data : {}) as { node?: string; values?: unknown };
      if (update.node === '__interrupt__') requests(namespace, update.values, out);
      else out.push(protocolEvent('updates', namespace, protocolState(update.values ?? {}), update.node));
    } else if (method.startsWith('custom:')) {
      out.push(protocolEvent('custom', namespace, { name: method.slice('custom:'.length), payload: data }));
    } else {
      out.push(protocolEvent(method, namespace, data, params.node));
    }
  };
}

/**
 * Streams one run as protocol events (see the file's comment), without the root lifecycle's; fills `outcome` as
 * graphStream.ts does. A failure is noted in `outcome`, never thrown. `kit`: the app's library's pieces, when it has
 * them and the graph is the app's LangGraph.js graph.
 *
 * The library's `streamEvents(…, {version: "v3"})` feeds the graph's stream through a mux that also builds the
 * in-process projections of a run (a log of every event and of the values, a message object per message, subgraph
 * handles), which nothing here reads: ~0.25 ms of a small run's CPU, ~10 %. The wire needs only what the mux passes
 * on: each chunk converted, and the lifecycle transformer's events before the event that caused them (it runs ahead of
 * the others and is the only one that adds or drops events). That is done here with the app's own library's pieces,
 * in the same order, for a graph with no stream transformers of its own (theirs add channels through the mux: such a
 * graph, an older library or a graph held elsewhere uses `streamEvents` itself).
 */
export async function* streamProtocol(
  graph: RunnableGraph,
  input: unknown,
  options: Record<string, unknown> & { signal: AbortSignal },
  outcome: GraphRunOutcome,
  kit: ProtocolEventKit | null = null,
): AsyncGenerator<StreamEvent> {
  const library = graph as LibraryGraph;
  const toServer = serverEvents(outcome);
  const out: StreamEvent[] = [];
  try {
    if (!kit || (library.streamTransformers?.length ?? 0) > 0) {
      const items = (await graph.streamEvents(input, { ...options, version: 'v3' })) as AsyncIterable<LibraryProtocolEvent>;
      for await (const item of items) {
        toServer(item, out);
        for (const event of out.splice(0)) yield event;
      }
    } else {
      // The options `streamEvents` v3 passes to the graph's stream.
      const streamOptions = {
        recursionLimit: library.config?.recursionLimit,
        ...options,
        configurable: { ...library.config?.configurable, ...(options.configurable as Record<string, unknown> | undefined) },
        version: 'v3',
        streamMode: kit.STREAM_EVENTS_V3_MODES,
        subgraphs: true,
        encoding: undefined,
      };
      const lifecycle = kit.createLifecycleTransformer();
      lifecycle.init();
      // Its root `running` (pushed now) is dropped like the library's: the root's lifecycle is the server's.
      lifecycle.onRegister({ push: (_namespace, event) => toServer(event, out) });
      try {
        const chunks = (await graph.stream(input, streamOptions)) as AsyncIterable<[string[], string, unknown]>;
        let seq = 0;
        for await (const [namespace, mode, payload] of chunks) {
          const events = kit.convertToProtocolEvent({ namespace, mode, payload, seq });
          seq += events.length;
          for (const event of events) if (lifecycle.process(event)) toServer(event, out);
          for (const event of out.splice(0)) yield event;
        }
      } catch (error) {
        lifecycle.fail(error);
        for (const event of out.splice(0)) yield event;
        throw error;
      }
      await lifecycle.finalize();
      for (const event of out.splice(0)) yield event;
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
