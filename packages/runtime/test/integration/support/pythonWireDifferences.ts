/**
 * Where Python's LangGraph and LangChain put a run of the same graph on the wire differently from LangGraph.js's: what
 * a client of the Python Agent Server sees too, so it is not ours to change (docs/decisions.md, "Golden wire
 * transcripts over Python graphs"). A golden transcript recorded from a JavaScript graph holds for its Python twin once
 * both have passed through `asPythonLibrariesGive`. Nothing here covers a shape our executor or wire translation makes:
 * those are fixed where they are made.
 */

/** One SSE frame: its lines in order (`event`, `data` parsed, `id`), so the order stays part of what is compared. */
export type SseFrame = Array<[field: string, value: any]>;

type Dict = Record<string, any>;
const isRecord = (value: unknown): value is Dict => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A message as its library dumps it (legacy modes, task payloads: the dicts with `additional_kwargs`) is pydantic's
 * `model_dump()` for Python (what the Python server sends): its fields in pydantic's order, and every field at its
 * default where a LangChain.js message leaves the field out: `name`, an AI message's `usage_metadata`, a tool
 * message's `artifact` (null) and `status` (Python's ToolMessage says "success" unless told otherwise; LangChain.js's
 * only when told, as its ToolNode does). A protocol-v2 state message (the server's shape, no `additional_kwargs`) has
 * only the fields that are set, so there only the tool message's `status` differs.
 */
const PYTHON_MESSAGE_DEFAULTS: Array<[string, unknown]> = [
  ['name', null],
  ['usage_metadata', null],
  ['artifact', null],
  ['status', 'success'],
];
const PYTHON_STATE_MESSAGE_DEFAULTS: Array<[string, unknown]> = [['status', 'success']];

const MESSAGE_TYPES = new Set(['human', 'ai', 'tool', 'system']);
const isMessageDict = (value: unknown): value is Dict => isRecord(value) && MESSAGE_TYPES.has(value.type) && 'content' in value;

function withoutPythonDefaults(message: Dict): Dict {
  const defaults = 'additional_kwargs' in message ? PYTHON_MESSAGE_DEFAULTS : PYTHON_STATE_MESSAGE_DEFAULTS;
  const kept = Object.keys(message)
    .filter((key) => !defaults.some(([name, value]) => key === name && message[key] === value))
    .sort();
  return Object.fromEntries(kept.map((key) => [key, message[key]]));
}

/** Every message dict in `value`, at any depth, as `withoutPythonDefaults` gives it. */
function messagesAlike(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(messagesAlike);
  if (!isRecord(value)) return value;
  const walked = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, messagesAlike(item)]));
  return isMessageDict(walked) ? withoutPythonDefaults(walked) : walked;
}

/** In messages-tuple metadata LangGraph.js adds the node run's `tags` and `name`, and `checkpoint_ns` copied from the config. */
const JS_ONLY_MESSAGE_METADATA = ['tags', 'name', 'checkpoint_ns'];

/** A messages-tuple chunk `[message, metadata]`: metadata without the keys only LangGraph.js adds. */
function messagesTupleAlike(data: unknown): unknown {
  if (!Array.isArray(data) || data.length !== 2 || !isRecord(data[1]) || !('langgraph_node' in data[1])) return data;
  const metadata = Object.fromEntries(Object.entries(data[1]).filter(([key]) => !JS_ONLY_MESSAGE_METADATA.includes(key)));
  return [data[0], metadata];
}

/**
 * A `tasks` payload: Python's task start has no `interrupts` (LangGraph.js's gives `[]`), Python adds
 * `ls_integration` to the callbacks' metadata, not the task's, and the libraries list a task result's fields in their
 * own orders (Python `id, name, error, result, interrupts`, LangGraph.js `id, name, result, interrupts, error`).
 */
function taskAlike(task: Dict): Dict {
  const alike = { ...task };
  if ('input' in alike && Array.isArray(alike.interrupts) && alike.interrupts.length === 0) delete alike.interrupts;
  if (isRecord(alike.metadata)) {
    const { ls_integration: _integration, ...metadata } = alike.metadata;
    alike.metadata = metadata;
  }
  return Object.fromEntries(
    Object.keys(alike)
      .sort()
      .map((key) => [key, alike[key]]),
  );
}

/**
 * Protocol-v2 messages events: a whole message is replayed by each library's own function, Python's
 * (`message_to_events`) naming `role` on message-start (the protocol's required field) and LangGraph.js's giving an
 * empty `responseMetadata` on message-finish.
 */
function messageEventAlike(event: Dict): Dict {
  const { role: _role, ...rest } = event;
  if (event.event === 'message-start') return rest;
  if (event.event === 'message-finish' && isRecord(event.responseMetadata) && Object.keys(event.responseMetadata).length === 0) {
    const { responseMetadata: _metadata, ...finish } = event;
    return finish;
  }
  return event;
}

/** A protocol event (`{type: "event", method, params}`) as both libraries would give it. */
function protocolEventAlike(event: Dict): Dict {
  const params = { ...event.params };
  if (event.method === 'messages') {
    // Python's LangGraph streams a node's tokens in the namespace of the graph running the node; LangGraph.js in the
    // node's task namespace (`agent:<task id>`).
    params.namespace = params.namespace.slice(0, -1);
    params.data = messageEventAlike(params.data);
  }
  if (event.method === 'tasks' && isRecord(params.data)) params.data = taskAlike(params.data);
  return { ...event, params };
}

const isProtocolEvent = (data: unknown): data is Dict => isRecord(data) && data.type === 'event' && isRecord(data.params);

/**
 * LangGraph.js gives a node's task namespace a lifecycle of its own (started, completed) once something streams in
 * it; Python's LangGraph streams in the graph's namespace and has none. The transcripts' graph has no subgraphs, so a
 * lifecycle event below the root is such a node's. Dropped, with every later seq one less per event dropped before it
 * (seqs count the run's events on every channel).
 */
function withoutNodeLifecycles(frames: SseFrame[]): SseFrame[] {
  const dropped: number[] = [];
  const kept = frames.filter((frame) => {
    const data = frame.find(([field]) => field === 'data')?.[1];
    const nodeLifecycle = isProtocolEvent(data) && data.method === 'lifecycle' && data.params.namespace.length > 0;
    if (nodeLifecycle) dropped.push(data.seq);
    return !nodeLifecycle;
  });
  const shifted = (seq: number) => seq - dropped.filter((gone) => gone < seq).length;
  return kept.map((frame) =>
    frame.map(([field, value]): [string, any] => {
      if (field === 'id' && /^\d+$/.test(value)) return [field, String(shifted(Number(value)))];
      if (field === 'data' && isProtocolEvent(value) && typeof value.seq === 'number') {
        return [field, { ...value, seq: shifted(value.seq), event_id: String(shifted(value.seq)) }];
      }
      return [field, value];
    }),
  );
}

/** `frames` with every difference above made alike; applied to the Python run and to the golden transcript alike. */
export function asPythonLibrariesGive(frames: SseFrame[]): SseFrame[] {
  return withoutNodeLifecycles(frames).map((frame) => {
    const event = frame.find(([field]) => field === 'event')?.[1];
    return frame.map(([field, value]): [string, any] => {
      if (field !== 'data') return [field, value];
      let data = isProtocolEvent(value) ? protocolEventAlike(value) : value;
      if (event === 'messages') data = messagesTupleAlike(data);
      return [field, messagesAlike(data)];
    });
  });
}
