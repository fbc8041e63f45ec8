/**
 * Which assistant an `assistant_id` names, for the routes and for runs. A graph name or a system assistant's id is
 * answered from memory (no query on the run path of graphx.json's own graphs); any other id is read from the
 * database. Runs of a user-created assistant are authorized with `assistants:read`: a caller cannot run an
 * assistant its filter hides (the anchor's 2026 fix). System assistants belong to the deployment, not to a user,
 * so they are not filtered for runs.
 */
import { NotFoundError } from '@graphx/kit/errors';
import { authorizeFor, type AppAuth } from './auth/appAuth';
import type { AuthUser } from './auth/authUser';
import type { Assistant, GraphRegistry, LoadedGraph } from './graphs';
import type { AssistantStore } from './storage/assistantStore';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ResolvedAssistant {
  assistant: Assistant;
  graph: LoadedGraph;
}

export class AssistantDirectory {
  constructor(
    private readonly graphs: GraphRegistry,
    readonly store: AssistantStore,
    private readonly appAuth: AppAuth | null,
  ) {}

  /** The id a path parameter names: a graph name stands for its system assistant. */
  idOf(assistantIdOrGraphId: string): string {
    return this.graphs.find(assistantIdOrGraphId)?.assistant.assistant_id ?? assistantIdOrGraphId;
  }

  /** Whether the id is a system assistant of graphx.json (read-only through the API). */
  isSystem(assistantId: string): boolean {
    return this.graphs.find(assistantId)?.assistant.assistant_id === assistantId;
  }

  /** The graph of a graph id, or a 404 naming it (a stored assistant whose graph left graphx.json). */
  graphOf(graphId: string): LoadedGraph {
    const graph = this.graphs.find(graphId);
    if (!graph || graph.spec.graphId !== graphId) throw new NotFoundError(`Graph ${graphId} not found in graphx.json.`);
    return graph;
  }

  /** Whether `graphId` is a graph of graphx.json. */
  hasGraph(graphId: string): boolean {
    return this.graphs.find(graphId)?.spec.graphId === graphId;
  }

  /**
   * The assistant a run names, with its graph.
   * @throws NotFoundError for an unknown id, or one the caller's `assistants:read` filter hides.
   */
  async forRun(assistantIdOrGraphId: string, user: AuthUser | null): Promise<ResolvedAssistant> {
    const system = this.graphs.find(assistantIdOrGraphId);
    if (system) return { assistant: system.assistant, graph: system };
    const missing = new NotFoundError(
      // The anchor's wording (clients match on it), then ours.
      `No assistant found for "${assistantIdOrGraphId}": use a graph name of graphx.json or an assistant id.`,
    );
    if (!UUID.test(assistantIdOrGraphId)) throw missing;
    const filter = await authorizeFor(this.appAuth, user, 'assistants', 'read', { assistant_id: assistantIdOrGraphId });
    const assistant = await this.store.get(assistantIdOrGraphId, filter).catch((error: unknown) => {
      throw error instanceof NotFoundError ? missing : error;
    });
    const graph = this.graphs.find(assistant.graph_id);
    if (!graph) throw missing;
    return { assistant, graph };
  }
}

/**
 * The config of the assistant a thread's runs used (its metadata names it), so a factory graph is rebuilt as the
 * runs built it when the thread's state is read or updated. Null for an unknown or deleted assistant.
 */
export async function assistantConfigOf(
  directory: AssistantDirectory,
  assistantId: string,
): Promise<Record<string, unknown> | null> {
  return directory.forRun(assistantId, null).then(
    (resolved) => resolved.assistant.config,
    (error: unknown) => {
      if (error instanceof NotFoundError) return null;
      throw error;
    },
  );
}

/**
 * A run's config over its assistant's: the client's keys win, `configurable` and `context` merge key by key (the
 * anchor's behaviour, so a run can override one setting of an assistant).
 */
export function mergeAssistantConfig(
  assistant: Assistant,
  config: Record<string, unknown> | undefined,
  context: unknown,
): { config: Record<string, unknown>; context: unknown } {
  const base = assistant.config ?? {};
  const merged: Record<string, unknown> = { ...base, ...(config ?? {}) };
  const configurable = { ...((base.configurable as object) ?? {}), ...((config?.configurable as object) ?? {}) };
  if (Object.keys(configurable).length > 0) merged.configurable = configurable;
  const assistantContext = assistant.context ?? {};
  const mergedContext =
    context !== null && typeof context === 'object' && !Array.isArray(context)
      ? { ...assistantContext, ...(context as object) }
      : (context ?? (Object.keys(assistantContext).length > 0 ? assistantContext : undefined));
  return { config: merged, context: mergedContext };
}
