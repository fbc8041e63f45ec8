/**
 * What a run is asked to do and the config its graph gets: the request's fields, the library's durability it maps to,
 * and the graph config in which the authenticated user overwrites anything the client sent. Pure: RunService and
 * BackgroundRuns build every run's config here.
 */
import crypto from 'node:crypto';
import type { AuthUser } from '../auth/authUser';
import type { LoadedGraph } from '../graphs';
import type { Run, RunOwner } from '../storage/runStore';
import type { ApiStreamMode } from './graphStream';
import type { MultitaskStrategy } from './threadClaim';
import { threadConfigurable, type CheckpointRef } from './threadScope';

export interface RunRequest {
  assistant_id: string;
  input?: unknown;
  command?: Record<string, unknown> | null;
  config?: { configurable?: Record<string, unknown>; tags?: string[]; recursion_limit?: number; [key: string]: unknown };
  context?: unknown;
  metadata?: Record<string, unknown>;
  stream_mode: ApiStreamMode[];
  stream_subgraphs?: boolean;
  on_disconnect: 'cancel' | 'continue';
  multitask_strategy?: MultitaskStrategy;
  if_not_exists?: 'reject' | 'create';
  stream_resumable?: boolean;
  webhook?: string;
  /** Fork: run from this earlier checkpoint of the thread instead of its head. */
  checkpoint_id?: string;
  /** Checked against the run's thread at the edge (threadScope.ts `checkpointIn`): never names another thread. */
  checkpoint?: CheckpointRef | null;
  /** Static breakpoints: the run stops before/after these nodes (`*`: every node) and the thread is `interrupted`. */
  interrupt_before?: '*' | string[] | null;
  interrupt_after?: '*' | string[] | null;
  /** A background run starts no earlier than this many seconds after its creation. */
  after_seconds?: number | null;
  /** When checkpoints are written (the library's `durability`): every step before the next (`sync`), beside it (`async`), or only at the end (`exit`). */
  durability?: 'sync' | 'async' | 'exit' | null;
  /** A stateless run's temporary thread: deleted (none is kept, the default) or kept (`keep`: runs on a new thread). */
  on_completion?: 'delete' | 'keep';
  /** Deprecated form of `durability`: false is `exit`, true `async`. */
  checkpoint_during?: boolean | null;
  /**
   * A protocol-v2 run (`run.start`): its events are protocol events (execution/protocolFrames.ts), whatever
   * `stream_mode` says. Set by the server only; a client's body never carries it (readRunRequest drops it).
   */
  protocol?: boolean;
}

/** The library's `durability` a request asks for (undefined: the library's default, `async`). */
export function durabilityOf(request: RunRequest): 'sync' | 'async' | 'exit' | undefined {
  if (request.durability) return request.durability;
  if (request.checkpoint_during === false) return 'exit';
  if (request.checkpoint_during === true) return 'async';
  return undefined;
}

export interface PreparedRun {
  run: Run;
  /** Who created the run: recorded with it, and what reads of a threadless run are checked against. */
  owner: RunOwner;
  graph: LoadedGraph;
  stateful: boolean;
  request: RunRequest;
  graphConfig: Record<string, unknown>;
  startedAt: number;
  /** Newest checkpoint of the thread when the run got it: a rollback deletes everything after it. */
  checkpointBefore: string | null;
  /** A queued run: cancellable through the coordinator even without a thread. */
  background?: boolean;
}

/** The reason a run is aborted with when another instance has taken it over: it is not over, so no webhook here. */
export class RunHandedOverError extends Error {
  constructor() {
    super('run lease lost');
  }
}

/**
 * Where the graph finds the caller: `graphx_auth_*` (CONTRACT §6), and the same values under the anchor's
 * `langgraph_auth_*` names, so a graph written for the anchor reads its user unchanged. The client can set neither.
 */
const AUTH_PREFIXES = ['graphx', 'langgraph'];
const AUTH_KEYS = AUTH_PREFIXES.flatMap((prefix) => ['user', 'user_id', 'permissions'].map((key) => `${prefix}_auth_${key}`));

/** The config the run's graph gets (thread, run and assistant ids, the caller, the client's config and context). */
export function graphConfigFor(
  user: AuthUser | null,
  run: Run,
  graph: LoadedGraph,
  request: RunRequest,
): Record<string, unknown> {
  const { configurable: clientConfigurable, recursion_limit: recursionLimit, ...restConfig } = request.config ?? {};
  // A threadless run still gets a thread id (a temporary one, never stored), as the anchors do.
  const threadId = run.thread_id ?? crypto.randomUUID();
  // A fork (checkpoint) applies to a thread run only; either way the run's own thread is the one configured.
  const fork = run.thread_id
    ? { ...(request.checkpoint ?? {}), ...(request.checkpoint_id ? { checkpoint_id: request.checkpoint_id } : {}) }
    : {};
  const configurable: Record<string, unknown> = {
    ...threadConfigurable(clientConfigurable, threadId, fork),
    run_id: run.run_id,
    graph_id: graph.spec.graphId,
    assistant_id: run.assistant_id,
  };
  for (const key of AUTH_KEYS) delete configurable[key];
  if (user) {
    for (const prefix of AUTH_PREFIXES) {
      configurable[`${prefix}_auth_user`] = user;
      configurable[`${prefix}_auth_user_id`] = user.identity;
      configurable[`${prefix}_auth_permissions`] = user.permissions;
    }
    configurable.user_id ??= user.identity;
  }
  const config: Record<string, unknown> = {
    ...restConfig,
    configurable,
    metadata: {
      ...run.metadata,
      graph_id: graph.spec.graphId,
      assistant_id: run.assistant_id,
      run_id: run.run_id,
      thread_id: threadId,
      run_attempt: 1,
    },
  };
  if (typeof recursionLimit === 'number') config.recursionLimit = recursionLimit;
  if (request.context !== undefined && request.context !== null) config.context = request.context;
  return config;
}
