/**
 * A Python graph as the runtime's RunnableGraph: every call is an RPC to the executor, which holds the graph and its
 * checkpointer. The run service, thread state and assistant routes use it exactly as a LangGraph.js graph; chunks
 * come back in LangGraph.js's shapes (wire.py), so graphStream.ts formats both languages' events alike.
 */
import crypto from 'node:crypto';
import type { GraphStateSnapshot, RunnableGraph } from '../graphs';
import type { GraphSchema } from '../graphSchemas';
import type { PythonExecutor } from './executor';
import { wrapMessageChunk, wrapValuesMessages } from './wireMessages';

/** The API's `command` for a Python graph (the executor builds LangGraph's Command from these fields). */
export class PythonCommand {
  constructor(readonly fields: Record<string, unknown>) {}
}

// Stream options that are not part of the run's config.
const STREAM_OPTIONS = new Set([
  'streamMode',
  'subgraphs',
  'signal',
  'interruptBefore',
  'interruptAfter',
  'durability',
  'version',
  'runId',
]);

function splitOptions(options: Record<string, unknown>): { config: Record<string, unknown>; stream: Record<string, any> } {
  const config: Record<string, unknown> = {};
  const stream: Record<string, any> = {};
  for (const [key, value] of Object.entries(options)) (STREAM_OPTIONS.has(key) ? stream : config)[key] = value;
  return { config, stream };
}

function inputFields(input: unknown): { input?: unknown; command?: Record<string, unknown> } {
  return input instanceof PythonCommand ? { command: input.fields } : { input };
}

function valuesOf(values: unknown): unknown {
  return values instanceof PythonCommand ? { __command__: values.fields } : values;
}

/** Chunks `[namespace, mode, chunk]` as LangGraph.js yields them (`[mode, chunk]` without subgraphs). */
function asLibraryChunk(item: unknown, subgraphs: boolean): unknown[] {
  const [namespace, mode, raw] = item as [string[], string, unknown];
  const chunk = mode === 'messages' ? wrapMessageChunk(raw) : mode === 'values' ? wrapValuesMessages(raw) : raw;
  return subgraphs ? [namespace, mode, chunk] : [mode, chunk];
}

export class PythonGraph implements RunnableGraph {
  checkpointer?: unknown;
  store?: unknown;

  constructor(
    private readonly executor: PythonExecutor,
    readonly graphId: string,
    /** The config a factory graph is built with (a run's, a thread's, an assistant's). */
    private readonly boundConfig: Record<string, unknown> = {},
  ) {}

  private get stateful(): boolean {
    return Boolean(this.checkpointer);
  }

  /** This graph for one run or request: a factory is built in the executor with this config. */
  bindConfig(config: Record<string, unknown>): PythonGraph {
    const bound = new PythonGraph(this.executor, this.graphId, config);
    bound.checkpointer = this.checkpointer;
    bound.store = this.store;
    return bound;
  }

  withConfig(): PythonGraph {
    return this.bindConfig(this.boundConfig);
  }

  command(fields: Record<string, unknown>): PythonCommand {
    return new PythonCommand(fields);
  }

  private base(config: Record<string, unknown> = this.boundConfig): Record<string, unknown> {
    return { graph_id: this.graphId, config, stateful: this.stateful };
  }

  async stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>> {
    const { config, stream } = splitOptions(options);
    const params = {
      ...this.base(config),
      ...inputFields(input),
      stream_mode: stream.streamMode ?? ['values'],
      subgraphs: Boolean(stream.subgraphs),
      interrupt_before: stream.interruptBefore ?? null,
      interrupt_after: stream.interruptAfter ?? null,
      durability: stream.durability ?? null,
    };
    const executor = this.executor;
    const subgraphs = Boolean(stream.subgraphs);
    return (async function* () {
      for await (const item of executor.stream('stream', params, stream.signal as AbortSignal | undefined)) {
        yield asLibraryChunk(item, subgraphs);
      }
    })();
  }

  async *streamEvents(input: unknown, options: Record<string, unknown>): AsyncIterable<Record<string, unknown>> {
    const { config, stream } = splitOptions(options);
    if (stream.version !== 'v2' && stream.version !== 'v3') throw new Error('Python graphs stream events in versions v2 and v3');
    const runId = (stream.runId as string | undefined) ?? crypto.randomUUID();
    const subgraphs = Boolean(stream.subgraphs);
    const params = {
      ...this.base(config),
      ...inputFields(input),
      run_id: runId,
      version: stream.version,
      stream_mode: stream.streamMode ?? ['values'],
      subgraphs,
      interrupt_before: stream.interruptBefore ?? null,
      interrupt_after: stream.interruptAfter ?? null,
      durability: stream.durability ?? null,
    };
    for await (const item of this.executor.stream('stream_events', params, stream.signal as AbortSignal | undefined)) {
      const { chunk, event, protocol } = item as {
        chunk?: unknown;
        event?: Record<string, unknown>;
        protocol?: Record<string, unknown>;
      };
      if (protocol) {
        // v3: protocol events, already in LangGraph.js's shapes (graphx_executor/protocol.py): read as the JS ones are.
        yield protocol;
      } else if (chunk !== undefined) {
        yield { event: 'on_chain_stream', run_id: runId, data: { chunk: asLibraryChunk(chunk, subgraphs) } };
      } else if (event) {
        yield event;
      }
    }
  }

  getState(config: Record<string, unknown>, options: { subgraphs?: boolean } = {}): Promise<GraphStateSnapshot> {
    return this.executor.call('get_state', { ...this.base(), state_config: config, subgraphs: Boolean(options.subgraphs) });
  }

  async *getStateHistory(
    config: Record<string, unknown>,
    options: { limit?: number; before?: Record<string, unknown>; filter?: Record<string, unknown> },
  ): AsyncIterable<GraphStateSnapshot> {
    const snapshots = await this.executor.call<GraphStateSnapshot[]>('get_state_history', {
      ...this.base(),
      state_config: config,
      limit: options.limit ?? null,
      before: options.before ?? null,
      filter: options.filter ?? null,
    });
    yield* snapshots;
  }

  updateState(
    config: Record<string, unknown>,
    values: unknown,
    asNode?: string,
  ): Promise<{ configurable?: Record<string, unknown> }> {
    return this.executor.call('update_state', {
      ...this.base(),
      state_config: config,
      values: valuesOf(values),
      as_node: asNode ?? null,
    });
  }

  bulkUpdateState(
    config: Record<string, unknown>,
    supersteps: Array<{ updates: Array<{ values: unknown; asNode?: string }> }>,
  ): Promise<{ configurable?: Record<string, unknown> }> {
    const steps = supersteps.map((step) => ({
      updates: step.updates.map((update) => ({ values: valuesOf(update.values), asNode: update.asNode ?? null })),
    }));
    return this.executor.call('bulk_update_state', { ...this.base(), state_config: config, supersteps: steps });
  }

  /** The drawable graph (`xray` expands subgraphs), as LangGraph's `Graph.to_json()`. */
  async getGraphAsync(config: Record<string, unknown>): Promise<{ toJSON(): unknown }> {
    const { xray, ...rest } = config;
    const drawn = await this.executor.call('get_graph', { ...this.base({ ...this.boundConfig, ...rest }), xray: xray ?? false });
    return { toJSON: () => drawn };
  }

  async *getSubgraphsAsync(namespace?: string, recurse?: boolean): AsyncIterable<[string, unknown]> {
    const found = await this.executor.call<Array<[string, GraphSchema]>>('get_subgraphs', {
      ...this.base(),
      namespace: namespace ?? null,
      recurse: Boolean(recurse),
    });
    for (const [name, schemas] of found) yield [name, { pythonSchemas: async () => schemas }];
  }

  /** The graph's JSON schemas as the Python library derives them (graphSchemas.ts asks this first). */
  pythonSchemas(): Promise<GraphSchema> {
    return this.executor.call('get_schemas', this.base());
  }
}
