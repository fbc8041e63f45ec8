/**
 * A thread's state as the agent-server API shows it: the head checkpoint or any earlier one, the history newest
 * first, and updates made outside a run (`as_node`). State is read through the thread's own graph (the graph named in
 * the thread's metadata by its first run), so channels are decoded exactly as the graph wrote them.
 */
import crypto from 'node:crypto';
import { ConflictError, InputError, NotFoundError } from '@graphx/kit/errors';
import type { GraphRegistry, GraphStateSnapshot, LoadedGraph, RunnableGraph } from '../graphs';
import type { ThreadLeases } from '../storage/threadLeases';
import type { ContainmentFilter, Thread, ThreadStatus, ThreadStore } from '../storage/threadStore';
import { checkpointOfConfig } from './debugPayloads';
import { toWireJson } from './serialize';
import { threadConfigurable, type CheckpointRef } from './threadScope';

export type { CheckpointRef } from './threadScope';

/** One superstep of a bulk update: its updates land in one checkpoint. */
export interface Superstep {
  updates: Array<{ values?: unknown; command?: Record<string, unknown> | null; as_node: string }>;
}

export interface HistoryQuery {
  limit: number;
  /** Only checkpoints older than this one (an id of a checkpoint of the same thread). */
  before?: string;
  metadata?: Record<string, unknown>;
  checkpoint?: CheckpointRef;
}

const EMPTY_STATE = {
  values: {},
  next: [],
  tasks: [],
  metadata: {},
  created_at: null,
  checkpoint: null,
  parent_checkpoint: null,
  interrupts: [],
};

/**
 * The anchor's ThreadState shape of a LangGraph state snapshot (as the JS server's stateSnapshotToThreadState); the
 * thread's own state also lists its pending `interrupts` (as the Python server's), a subgraph's state in a task does not.
 */
export function toThreadState(snapshot: GraphStateSnapshot, nested = false): Record<string, unknown> {
  const tasks = snapshot.tasks.map((task) => {
    const state = task.state as GraphStateSnapshot | { configurable?: unknown } | undefined;
    return {
      id: task.id,
      name: task.name,
      error: task.error ? String((task.error as Error).message ?? task.error) : null,
      interrupts: task.interrupts ?? [],
      path: task.path ?? [],
      checkpoint: state && 'configurable' in state ? (state.configurable ?? null) : null,
      state: state && 'values' in state && 'next' in state ? toThreadState(state, true) : null,
      result: task.result ?? null,
    };
  });
  const metadata = { ...(snapshot.metadata ?? {}) };
  if (metadata.checkpoint_ns === '') delete metadata.checkpoint_ns;
  const state: Record<string, unknown> = {
    values: snapshot.values,
    next: snapshot.next,
    tasks,
    metadata,
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointOfConfig(snapshot.config),
    parent_checkpoint: checkpointOfConfig(snapshot.parentConfig),
  };
  if (!nested) state.interrupts = tasks.flatMap((task) => task.interrupts as unknown[]);
  return state;
}

/** The thread's `interrupts` field: pending interrupts per task id. */
export function interruptsOf(snapshot: GraphStateSnapshot): Record<string, unknown> {
  const interrupts: Record<string, unknown> = {};
  for (const task of snapshot.tasks) {
    const pending = task.interrupts as unknown[] | undefined;
    if (pending && pending.length > 0) interrupts[String(task.id)] = pending;
  }
  return interrupts;
}

export class ThreadStateService {
  constructor(
    private readonly deps: {
      graphs: GraphRegistry;
      threads: ThreadStore;
      leases: ThreadLeases;
      afterRelease: (threadId: string) => Promise<void>;
      /** Whether the thread has a queued run not yet started (an update would race it); absent in unit set-ups. */
      hasPendingRuns?: (threadId: string) => Promise<boolean>;
      /** The config of an assistant by id (null: unknown); absent in unit set-ups. */
      assistantConfig?: (assistantId: string) => Promise<Record<string, unknown> | null>;
      /** The application's own `Command` class (for `command` updates); absent in unit set-ups. */
      commandClass?: () => Promise<new (fields: Record<string, unknown>) => unknown>;
    },
  ) {}

  /** The state at the head, or at `checkpoint` (wire JSON text). */
  async get(threadId: string, filter: ContainmentFilter, checkpoint: CheckpointRef = {}, subgraphs = false): Promise<string> {
    const { thread, graph } = await this.threadAndGraph(threadId, filter);
    if (!graph) return JSON.stringify(EMPTY_STATE);
    const config = this.config(thread, checkpoint);
    const snapshot = await (await graph.forRun(config, true)).getState(config, { subgraphs });
    return toWireJson(toThreadState(snapshot));
  }

  /** Checkpoints newest first (wire JSON text of an array). */
  async history(threadId: string, filter: ContainmentFilter, query: HistoryQuery): Promise<string> {
    const { thread, graph } = await this.threadAndGraph(threadId, filter);
    if (!graph) return '[]';
    const config = this.config(thread, { checkpoint_ns: '', ...query.checkpoint });
    const before = query.before ? { configurable: { checkpoint_id: query.before } } : undefined;
    const states: Record<string, unknown>[] = [];
    const compiled = await graph.forRun(config, true);
    for await (const snapshot of compiled.getStateHistory(config, { limit: query.limit, before, filter: query.metadata })) {
      states.push(toThreadState(snapshot));
    }
    return toWireJson(states);
  }

  /**
   * Writes `values` as if node `asNode` had returned them. The thread is taken like a run takes it, so an update
   * never interleaves with a running run (409 while one runs).
   */
  async update(
    threadId: string,
    filter: ContainmentFilter,
    update: { values: unknown; asNode?: string; checkpoint?: CheckpointRef },
  ): Promise<Record<string, unknown>> {
    return this.underLease(threadId, filter, update.checkpoint ?? {}, (compiled, config) =>
      compiled.updateState(config, update.values, update.asNode),
    );
  }

  /**
   * Applies `supersteps` in order, each one checkpoint holding all its updates (the library's `bulkUpdateState`, as
   * the anchor does for the `supersteps` of a new thread); taken like `update`.
   */
  async bulkUpdate(threadId: string, filter: ContainmentFilter, supersteps: Superstep[]): Promise<Record<string, unknown>> {
    const hasCommands = supersteps.some((step) => step.updates.some((one) => one.command));
    return this.underLease(threadId, filter, {}, async (compiled, config) => {
      const Command = hasCommands && !compiled.command ? await this.commandClass() : null;
      const command = (fields: Record<string, unknown>) => (compiled.command ? compiled.command(fields) : new Command!(fields));
      const steps = supersteps.map((step) => ({
        updates: step.updates.map((one) => ({ values: one.command ? command(one.command) : one.values, asNode: one.as_node })),
      }));
      if (typeof compiled.bulkUpdateState !== 'function') {
        throw new InputError("The application's @langchain/langgraph cannot apply supersteps: it has no bulkUpdateState.");
      }
      return compiled.bulkUpdateState(config, steps);
    });
  }

  /** Runs `write` on the thread's graph with the thread taken as a run takes it; the new checkpoint's config. */
  private async underLease(
    threadId: string,
    filter: ContainmentFilter,
    checkpoint: CheckpointRef,
    write: (compiled: RunnableGraph, config: Record<string, unknown>) => Promise<{ configurable?: Record<string, unknown> }>,
  ): Promise<Record<string, unknown>> {
    const { thread, graph } = await this.threadAndGraph(threadId, filter);
    // Even a thread that never ran: its queued run would start from a state the client did not schedule it on.
    if (await this.deps.hasPendingRuns?.(threadId)) throw new ConflictError(`Thread ${threadId} is busy: a run is queued on it.`);
    if (!graph) throw new InputError(`Thread ${threadId} has no graph yet: run it once before updating its state.`);
    const holder = crypto.randomUUID();
    const claimed = await this.deps.leases.claim(threadId, holder, filter, {}, null);
    if (claimed.kind === 'missing') throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    if (claimed.kind === 'busy') throw new ConflictError(`Thread ${threadId} is busy: a run is in progress.`);
    let status: ThreadStatus = thread.status === 'busy' ? 'idle' : thread.status;
    let valuesJson: string | null = null;
    let interrupts: Record<string, unknown> = thread.interrupts;
    try {
      const config = this.config(thread, { checkpoint_ns: '', ...checkpoint });
      const compiled = await graph.forRun(config, true);
      const next = await write(compiled, config);
      const snapshot = await compiled.getState({ configurable: { thread_id: threadId } });
      valuesJson = toWireJson(snapshot.values);
      interrupts = interruptsOf(snapshot);
      // As the anchor: a thread with a next node to run (a breakpoint, an interrupt) is interrupted.
      status = Object.keys(interrupts).length > 0 || snapshot.next.length > 0 ? 'interrupted' : 'idle';
      return { checkpoint: next.configurable ?? null };
    } finally {
      await this.deps.leases.release(threadId, holder, { status, valuesJson, interrupts, error: null });
      await this.deps.afterRelease(threadId).catch(() => undefined);
    }
  }

  private async commandClass(): Promise<new (fields: Record<string, unknown>) => unknown> {
    if (!this.deps.commandClass) throw new InputError('Commands in supersteps are not supported here.');
    return this.deps.commandClass();
  }

  private config(thread: Thread, checkpoint: CheckpointRef): Record<string, unknown> {
    return {
      configurable: threadConfigurable(thread.config.configurable as Record<string, unknown>, thread.thread_id, checkpoint),
    };
  }

  private async threadAndGraph(
    threadId: string,
    filter: ContainmentFilter,
  ): Promise<{ thread: Thread; graph: LoadedGraph | undefined }> {
    const found = await this.deps.threads.get(threadId, filter);
    if (!found) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    const assistantId = found.metadata.assistant_id;
    const assistant =
      typeof assistantId === 'string' && this.deps.assistantConfig ? await this.deps.assistantConfig(assistantId) : null;
    // A factory graph is rebuilt with the config its runs had: the assistant's under the thread's own.
    const thread = assistant
      ? {
          ...found,
          config: {
            ...found.config,
            configurable: { ...(assistant.configurable as object), ...(found.config.configurable as object) },
          },
        }
      : found;
    return { thread, graph: this.deps.graphs.find(String(thread.metadata.graph_id ?? '')) };
  }
}
