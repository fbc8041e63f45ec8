/**
 * The graphs of graphx.json and their system assistants. An export may be a compiled graph, an uncompiled
 * `StateGraph`, a promise of either, or a factory called per run with the run's config. Graph objects come from the
 * application's own `@langchain/langgraph`, so they are handled by shape (duck typing), never by `instanceof`.
 */
import crypto from 'node:crypto';
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import { ConfigError } from '@graphx/kit/errors';
import type { GraphSpec } from './appConfig';
import { importExport } from './moduleLoader';
import type { PythonExecutor } from './python/executor';
import { PythonGraph } from './python/pythonGraph';
import { extractStaticGraphSchemas, type StaticGraphSchemas } from './staticGraphSchemas';
import type { AssistantDefaults } from './settings';

/** The part of a compiled LangGraph.js graph the runtime uses. */
export interface RunnableGraph {
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, options: Record<string, unknown>): AsyncIterable<Record<string, unknown>>;
  getState(config: Record<string, unknown>, options?: { subgraphs?: boolean }): Promise<GraphStateSnapshot>;
  getStateHistory(
    config: Record<string, unknown>,
    options: { limit?: number; before?: Record<string, unknown>; filter?: Record<string, unknown> },
  ): AsyncIterable<GraphStateSnapshot>;
  updateState(
    config: Record<string, unknown>,
    values: unknown,
    asNode?: string,
  ): Promise<{ configurable?: Record<string, unknown> }>;
  /** Absent from older LangGraph.js releases. */
  bulkUpdateState?(
    config: Record<string, unknown>,
    supersteps: Array<{ updates: Array<{ values: unknown; asNode?: string }> }>,
  ): Promise<{ configurable?: Record<string, unknown> }>;
  withConfig(config: Record<string, unknown>): RunnableGraph;
  /** A graph held elsewhere (a Python graph) is bound to the config of each run or request. */
  bindConfig?(config: Record<string, unknown>): RunnableGraph;
  /** The graph's own form of the API's `command` (a Python graph's); else the app's LangGraph.js Command is used. */
  command?(fields: Record<string, unknown>): unknown;
  checkpointer?: unknown;
  store?: unknown;
}

export interface GraphStateSnapshot {
  values: unknown;
  next: string[];
  tasks: Array<Record<string, unknown>>;
  metadata?: Record<string, unknown>;
  config?: { configurable?: Record<string, unknown> };
  parentConfig?: { configurable?: Record<string, unknown> };
  createdAt?: string;
}

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}

// The namespace the LangGraph JS server derives system assistant ids with, so assistant ids match the anchor's.
const NAMESPACE_URL = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

/** uuid v5 (SHA-1, name-based), as the anchors compute system assistant ids. */
export function uuid5(name: string, namespace = NAMESPACE_URL): string {
  const hash = crypto
    .createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

type GraphFactory = (config: Record<string, unknown>) => unknown;

function isCompiled(value: unknown): value is RunnableGraph {
  return typeof (value as RunnableGraph)?.stream === 'function' && typeof (value as RunnableGraph)?.getState === 'function';
}

/** Turns what an export evaluates to into a compiled graph (compiling a StateGraph, unwrapping `.graph`). */
function toCompiled(value: unknown, graphId: string): RunnableGraph {
  if (isCompiled(value)) return value;
  const candidate = value as { compile?: () => unknown; graph?: unknown };
  if (typeof candidate?.compile === 'function') return toCompiled(candidate.compile(), graphId);
  if (candidate?.graph && isCompiled(candidate.graph)) return candidate.graph;
  throw new ConfigError(`Graph ${graphId} is neither a compiled graph, a StateGraph, a promise nor a factory`);
}

/**
 * Copies of one graph for the two kinds of run: thread runs checkpoint into PostgreSQL, threadless runs keep no
 * checkpoint at all. `withConfig` returns a new graph object, so concurrent runs never share a mutated one.
 */
function withCheckpointer(graph: RunnableGraph, checkpointer: object | undefined, store: BaseStore): RunnableGraph {
  if (!checkpointer && !graph.checkpointer && graph.store === store) return graph;
  const copy = graph.withConfig({});
  copy.checkpointer = checkpointer;
  // The deployment's store (the same one /store/* serves), as the anchor gives every graph.
  copy.store = store;
  return copy;
}

export class LoadedGraph {
  readonly assistant: Assistant;
  private threaded?: RunnableGraph;
  private threadless?: RunnableGraph;
  private factory?: GraphFactory;
  private typeCheckedSchemas?: Promise<StaticGraphSchemas | undefined>;

  constructor(
    readonly spec: GraphSpec,
    exported: unknown,
    /** The PostgreSQL checkpointer; for Python graphs only a mark that they have one (their executor checkpoints). */
    private readonly checkpointer: object,
    private readonly store: BaseStore,
    loadedAt: string,
    defaults: { config: Record<string, unknown>; context: Record<string, unknown> } = { config: {}, context: {} },
  ) {
    const assistantId = uuid5(spec.graphId);
    this.assistant = {
      assistant_id: assistantId,
      graph_id: spec.graphId,
      name: spec.graphId,
      description: spec.description,
      config: defaults.config,
      context: defaults.context,
      metadata: { created_by: 'system' },
      version: 1,
      created_at: loadedAt,
      updated_at: loadedAt,
    };
    if (typeof exported === 'function' && !isCompiled(exported)) {
      this.factory = exported as GraphFactory;
    } else {
      const compiled = toCompiled(exported, spec.graphId);
      this.threaded = withCheckpointer(compiled, checkpointer, store);
      this.threadless = withCheckpointer(compiled, undefined, store);
    }
  }

  /** The graph to run: a factory is called per run with the run's config. */
  async forRun(config: Record<string, unknown>, stateful: boolean): Promise<RunnableGraph> {
    if (!this.factory) {
      const graph = (stateful ? this.threaded : this.threadless)!;
      return graph.bindConfig ? graph.bindConfig(config) : graph;
    }
    const compiled = toCompiled(await this.factory(config), this.spec.graphId);
    return withCheckpointer(compiled, stateful ? this.checkpointer : undefined, this.store);
  }

  /**
   * The schemas the TypeScript type checker reads from the graph's source (seconds of CPU: once per process, on first
   * use); none when that fails (a JavaScript source, a type error the checker cannot get past), with a warning.
   */
  staticSchemas(): Promise<StaticGraphSchemas | undefined> {
    if (this.spec.language === 'python') return Promise.resolve(undefined);
    this.typeCheckedSchemas ??= extractStaticGraphSchemas(this.spec.file, this.spec.exportName).catch((error: Error) => {
      process.emitWarning(`graph "${this.spec.graphId}": ${error.message}`);
      return undefined;
    });
    return this.typeCheckedSchemas;
  }
}

/** Every graph of the application, by graph id and by assistant id. */
export class GraphRegistry {
  private readonly byId = new Map<string, LoadedGraph>();

  private constructor(readonly graphs: LoadedGraph[]) {
    for (const graph of graphs) {
      this.byId.set(graph.spec.graphId, graph);
      this.byId.set(graph.assistant.assistant_id, graph);
    }
  }

  /**
   * Imports every graph of graphx.json (awaiting promises); `defaults` are the system assistants' config and context.
   * Python graphs are loaded by the executor (`python`), which must be there when graphx.json names one.
   * @throws ConfigError naming the graph that failed.
   */
  static async load(
    specs: GraphSpec[],
    checkpointer: object,
    store: BaseStore,
    defaults: AssistantDefaults = {},
    python?: { executor: PythonExecutor; appDir: string },
  ): Promise<GraphRegistry> {
    const loadedAt = new Date().toISOString();
    const pythonSpecs = specs.filter((spec) => spec.language === 'python');
    if (pythonSpecs.length > 0) {
      if (!python) throw new ConfigError(`Graph ${pythonSpecs[0]!.graphId} is Python, and no Python executor runs here`);
      await python.executor.call('load', { app_dir: python.appDir, graphs: pythonSpecs }).catch((error: Error) => {
        throw new ConfigError(error.message);
      });
    }
    const graphs: LoadedGraph[] = [];
    for (const spec of specs) {
      const exported = spec.language === 'python' ? new PythonGraph(python!.executor, spec.graphId) : await importExport(spec);
      graphs.push(new LoadedGraph(spec, await exported, checkpointer, store, loadedAt, defaults[spec.graphId]));
    }
    return new GraphRegistry(graphs);
  }

  /** A graph by graph name or assistant id. */
  find(assistantIdOrGraphId: string): LoadedGraph | undefined {
    return this.byId.get(assistantIdOrGraphId);
  }
}
