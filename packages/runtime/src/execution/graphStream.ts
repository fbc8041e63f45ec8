/**
 * Runs a graph and turns its stream into the SSE events of CONTRACT §6. The library's stream modes are a different
 * set from the API's: `messages-tuple` is the library's `messages`; the API's legacy `messages` is derived from the
 * library's `messages` (token chunks → `messages/partial`) and `values` (new ids → `messages/complete`). `values` is
 * requested internally whenever the run's output is read (thread runs: the thread's new values; traced runs: the
 * record's outputs). A threadless, untraced run that streams `updates` skips it: each extra chunk costs the library a
 * state read and a web-stream hop, and an interrupt still shows in `updates` as `__interrupt__`.
 */
import crypto from 'node:crypto';
import type { RunnableGraph } from '../graphs';
import { wireDebugCheckpoint, wireDebugChunk, wireDebugTask } from './debugPayloads';
import { isMessage } from './serialize';

export const API_STREAM_MODES = [
  'values',
  'updates',
  'messages',
  'messages-tuple',
  'custom',
  'debug',
  'tasks',
  'checkpoints',
  'events',
] as const;
export type ApiStreamMode = (typeof API_STREAM_MODES)[number];

/**
 * The signal of a run nothing can stop: a threadless stream or wait whose client leaving does not cancel it
 * (`on_disconnect: continue`, the default). It is not handed to the library, where a signal costs an AbortController,
 * listeners and a race with every step and task of the run.
 */
export const UNSTOPPABLE: AbortSignal = new AbortController().signal;

export interface StreamEvent {
  event: string;
  data: unknown;
}

export interface GraphRunOutcome {
  status: 'success' | 'error' | 'interrupted';
  /** The last `values` chunk (the graph's state at the end). */
  finalValues: unknown;
  interrupted: boolean;
  error: { error: string; message: string } | null;
}

function libraryModes(modes: ApiStreamMode[], outputNeeded: boolean): string[] {
  const library = new Set<string>(outputNeeded || !modes.includes('updates') ? ['values'] : []);
  for (const mode of modes) {
    if (mode === 'messages-tuple' || mode === 'messages') library.add('messages');
    else if (mode !== 'events') library.add(mode);
  }
  return [...library];
}

/** Legacy `messages` mode: the accumulated message per id, and which ids were completed. */
class LegacyMessagesState {
  private readonly partial = new Map<string, { concat?: (other: unknown) => unknown }>();
  private readonly completed = new Set<string>();

  *fromChunk(message: unknown, metadata: unknown): Generator<StreamEvent> {
    // Only streamed tokens (message chunks, which have `concat`) are partials; whole messages a node returned are
    // reported once, as complete, from the next values chunk.
    if (!isMessage(message) || typeof message.concat !== 'function' || !message.id) return;
    const previous = this.partial.get(message.id);
    if (!previous) yield { event: 'messages/metadata', data: { [message.id]: { metadata } } };
    const accumulated = previous?.concat ? previous.concat(message) : message;
    this.partial.set(message.id, accumulated as { concat?: (other: unknown) => unknown });
    yield { event: 'messages/partial', data: [accumulated] };
  }

  *fromValues(values: unknown): Generator<StreamEvent> {
    const messages = Array.isArray(values) ? values : (values as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(messages)) return;
    const fresh = messages.filter((message) => isMessage(message) && message.id && !this.completed.has(message.id));
    for (const message of fresh) this.completed.add(message.id);
    if (fresh.length > 0) yield { event: 'messages/complete', data: fresh };
  }
}

/** `debug`, `tasks` and `checkpoints` chunks name their checkpoints as the thread's history does (debugPayloads.ts). */
function wireChunk(mode: string, chunk: unknown): unknown {
  if (mode === 'debug') return wireDebugChunk(chunk);
  if (mode === 'tasks') return wireDebugTask(chunk);
  if (mode === 'checkpoints') return wireDebugCheckpoint(chunk);
  return chunk;
}

/** A callback event of the run (`events` stream mode), told apart from the graph's stream chunks. */
class LibraryEvent {
  constructor(readonly event: Record<string, unknown>) {}
}

/**
 * The `events` stream mode: the library's `streamEvents` (v2) carries every callback event, and the graph's own
 * stream chunks as the root run's `on_chain_stream` events; those are turned back into chunks, the rest are events.
 */
async function* withEvents(graph: RunnableGraph, input: unknown, options: Record<string, unknown>): AsyncGenerator<unknown> {
  const runId = crypto.randomUUID();
  const events = graph.streamEvents(input, { ...options, version: 'v2', runId });
  for await (const event of events) {
    if ((event.tags as string[] | undefined)?.includes('langsmith:hidden')) continue;
    const data = event.data as { chunk?: unknown } | undefined;
    if (event.event === 'on_chain_stream' && event.run_id === runId) yield data?.chunk;
    else yield new LibraryEvent(event);
  }
}

/**
 * Streams one run. Events are yielded as they come; the outcome is written into `outcome` when the generator ends
 * (a failure becomes an `error` event, never a throw).
 */
export async function* streamGraph(
  graph: RunnableGraph,
  input: unknown,
  options: {
    modes: ApiStreamMode[];
    config: Record<string, unknown>;
    signal: AbortSignal;
    subgraphs: boolean;
    outputNeeded: boolean;
    interruptBefore?: '*' | string[];
    interruptAfter?: '*' | string[];
    durability?: 'sync' | 'async' | 'exit';
  },
  outcome: GraphRunOutcome,
): AsyncGenerator<StreamEvent> {
  const wanted = new Set(options.modes);
  const legacy = wanted.has('messages') ? new LegacyMessagesState() : null;
  try {
    const streamOptions = {
      ...options.config,
      streamMode: libraryModes(options.modes, options.outputNeeded),
      subgraphs: options.subgraphs,
      ...(options.signal === UNSTOPPABLE ? {} : { signal: options.signal }),
      ...(options.interruptBefore ? { interruptBefore: options.interruptBefore } : {}),
      ...(options.interruptAfter ? { interruptAfter: options.interruptAfter } : {}),
      ...(options.durability ? { durability: options.durability } : {}),
    };
    const stream = wanted.has('events') ? withEvents(graph, input, streamOptions) : await graph.stream(input, streamOptions);
    for await (const item of stream) {
      if (item instanceof LibraryEvent) {
        yield { event: 'events', data: item.event };
        continue;
      }
      yield* eventsOfChunk(item as unknown[], options.subgraphs, wanted, legacy, outcome);
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
    yield { event: 'error', data: outcome.error };
  }
}

/** The API events of one library chunk (`[namespace?, mode, chunk]`), noting final values and interrupts in `outcome`. */
function* eventsOfChunk(
  parts: unknown[],
  subgraphs: boolean,
  wanted: Set<ApiStreamMode>,
  legacy: LegacyMessagesState | null,
  outcome: GraphRunOutcome,
): Generator<StreamEvent> {
  const [namespace, mode, chunk] = subgraphs ? (parts as [string[], string, unknown]) : [[], parts[0] as string, parts[1]];
  const suffix = namespace.length > 0 ? `|${namespace.join('|')}` : '';
  if (mode === 'values') {
    if (!suffix) {
      // An interrupt arrives as a values chunk of its own; the state stays the one before it.
      if (chunk && typeof chunk === 'object' && '__interrupt__' in chunk) outcome.interrupted = true;
      else outcome.finalValues = chunk;
    }
    if (wanted.has('values')) yield { event: `values${suffix}`, data: chunk };
    if (legacy) for (const event of legacy.fromValues(chunk)) yield { ...event, event: event.event + suffix };
  } else if (mode === 'messages') {
    const [message, metadata] = chunk as [unknown, unknown];
    if (wanted.has('messages-tuple')) yield { event: `messages${suffix}`, data: chunk };
    if (legacy) for (const event of legacy.fromChunk(message, metadata)) yield { ...event, event: event.event + suffix };
  } else if (mode === 'updates' && chunk && typeof chunk === 'object' && '__interrupt__' in chunk) {
    outcome.interrupted = true;
    if (wanted.has('updates')) yield { event: `updates${suffix}`, data: chunk };
  } else {
    yield { event: `${mode}${suffix}`, data: wireChunk(mode, chunk) };
  }
}
