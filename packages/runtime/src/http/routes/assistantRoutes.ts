/**
 * Assistants: create, read, patch (a new version), delete, search, count, versions and "set latest"; the graph
 * views (graph, schemas, subgraphs) are in assistantGraphRoutes.ts. System assistants (one per graph of
 * graphx.json) are stored beside user-created ones and are read-only here: graphx.json is their source. Every route
 * asks the app's authorization handler for `assistants:<action>`; an assistant outside the filter answers 404.
 */
import crypto from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import { ConflictError, NotFoundError, ValidationError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import { ThreadService } from '../../execution/threadService';
import type { Assistant } from '../../graphs';
import type { AssistantFields, AssistantQuery, AssistantSearch } from '../../storage/assistantStore';
import {
  assistantCountBody,
  assistantCreateBody,
  assistantLatestInput,
  assistantPatchBody,
  assistantPathParams,
  assistantSearchBody,
  assistantVersionsBody,
} from '../assistantSchemas';
import { filterFor, type RuntimeServices } from './context';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Nullable<T> = { [K in keyof T]?: T[K] | null };
type CreateBody = Nullable<Omit<AssistantFields, 'graph_id'>> & {
  assistant_id?: string;
  graph_id: string;
  if_exists: 'raise' | 'do_nothing';
};
type SearchBody = Nullable<AssistantQuery> & Omit<AssistantSearch, keyof AssistantQuery> & { select?: string[] };

/** Drops nulls: a null field of a patch or a query means "not given", as in the anchor. */
function given<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined)) as never;
}

/** The assistant id a path names (a graph name stands for its system assistant); anything else is a 404. */
export function assistantIdOf(services: RuntimeServices, ctx: Koa.Context): string {
  const path = { assistantId: ctx.params.assistantId };
  const { assistantId } = validatePart<{ assistantId: string }>(assistantPathParams, path, 'path');
  const id = services.assistants.idOf(assistantId);
  if (!UUID.test(id)) throw new NotFoundError('Assistant not found');
  return id.toLowerCase();
}

/** The assistant a path names, if the caller's `assistants:read` filter shows it. */
export async function readAssistant(services: RuntimeServices, ctx: Koa.Context): Promise<Assistant> {
  const assistantId = assistantIdOf(services, ctx);
  const filter = await filterFor(services, ctx, 'assistants', 'read', { assistant_id: assistantId });
  return services.assistants.store.get(assistantId, filter);
}

function refuseSystem(services: RuntimeServices, assistantId: string): void {
  if (services.assistants.isSystem(assistantId)) {
    throw new ConflictError('A graph of graphx.json owns this assistant; create an assistant from the graph to change it.');
  }
}

function setPagination(ctx: Koa.Context, offset: number, pageLength: number, total: number): void {
  ctx.set('X-Pagination-Total', String(total));
  if (offset + pageLength < total) ctx.set('X-Pagination-Next', String(offset + pageLength));
}

export function registerAssistantRoutes(router: Router, services: RuntimeServices): void {
  // Read at request time: the route list is also built from an empty services object (malformedInput test).
  const assistantStore = () => services.assistants.store;
  const threads = new ThreadService(services);

  router.post('/assistants', async (ctx) => {
    const body = validatePart<CreateBody>(assistantCreateBody, ctx.state.body, 'body');
    if (!services.assistants.hasGraph(body.graph_id)) {
      const msg = `Graph ${body.graph_id} is not a graph of graphx.json`;
      throw new ValidationError([{ loc: ['body', 'graph_id'], msg, type: 'value_error' }]);
    }
    const assistantId = (body.assistant_id ?? crypto.randomUUID()).toLowerCase();
    const value = { ...body, assistant_id: assistantId, metadata: { ...(body.metadata ?? {}) } };
    const filter = await filterFor(services, ctx, 'assistants', 'create', value);
    const fields: AssistantFields = {
      graph_id: body.graph_id,
      name: body.name || body.graph_id,
      description: body.description ?? null,
      config: body.config ?? {},
      context: body.context ?? {},
      metadata: value.metadata ?? {},
    };
    ctx.body = await assistantStore().create(assistantId, fields, body.if_exists, filter);
  });

  router.post('/assistants/search', async (ctx) => {
    const body = validatePart<SearchBody>(assistantSearchBody, ctx.state.body, 'body');
    const query = given(body) as AssistantSearch & { select?: string[] };
    const filter = await filterFor(services, ctx, 'assistants', 'search', { ...query });
    const { assistants, total } = await assistantStore().search(query, filter);
    setPagination(ctx, query.offset, assistants.length, total);
    const select = query.select;
    ctx.body = select
      ? assistants.map((assistant) => Object.fromEntries(Object.entries(assistant).filter(([key]) => select.includes(key))))
      : assistants;
  });

  router.post('/assistants/count', async (ctx) => {
    const query = given(validatePart<Nullable<AssistantQuery>>(assistantCountBody, ctx.state.body, 'body'));
    const filter = await filterFor(services, ctx, 'assistants', 'search', { ...query, limit: 0, offset: 0 });
    ctx.body = await assistantStore().count(query, filter);
  });

  router.get('/assistants/:assistantId', async (ctx) => {
    ctx.body = await readAssistant(services, ctx);
  });

  router.patch('/assistants/:assistantId', async (ctx) => {
    const assistantId = assistantIdOf(services, ctx);
    const changes = given(validatePart<Nullable<AssistantFields>>(assistantPatchBody, ctx.state.body, 'body'));
    if (changes.graph_id && !services.assistants.hasGraph(changes.graph_id)) {
      const msg = `Graph ${changes.graph_id} is not a graph of graphx.json`;
      throw new ValidationError([{ loc: ['body', 'graph_id'], msg, type: 'value_error' }]);
    }
    const value = { ...changes, assistant_id: assistantId, metadata: changes.metadata ? { ...changes.metadata } : undefined };
    const filter = await filterFor(services, ctx, 'assistants', 'update', value);
    refuseSystem(services, assistantId);
    ctx.body = await assistantStore().patch(assistantId, { ...changes, metadata: value.metadata }, filter);
  });

  router.delete('/assistants/:assistantId', async (ctx) => {
    const assistantId = assistantIdOf(services, ctx);
    const deleteThreads = ctx.query.delete_threads === 'true';
    const filter = await filterFor(services, ctx, 'assistants', 'delete', { assistant_id: assistantId });
    await assistantStore().get(assistantId, filter);
    refuseSystem(services, assistantId);
    if (!(await assistantStore().delete(assistantId, filter))) throw new NotFoundError('Assistant not found');
    // As the Python server: the assistant's pending and running runs are interrupted (they could not start or go on).
    for (const run of await services.runQueue.activeForAssistant(assistantId)) {
      await services.backgroundRuns.cancel(run.thread_id, [run.run_id], 'interrupt');
    }
    if (deleteThreads) {
      // Only the threads the caller could delete one by one: the threads:delete filter applies here too.
      const metadata = { assistant_id: assistantId };
      const threadFilter = await filterFor(services, ctx, 'threads', 'delete', { metadata });
      // Deleted threads leave the result, so the next page starts after the ones that could not be deleted.
      let kept = 0;
      for (;;) {
        const query = { metadata, limit: 100, offset: kept, sortBy: 'created_at', sortOrder: 'asc' } as const;
        const { threads: page } = await services.threads.search(query, threadFilter);
        if (page.length === 0) break;
        for (const thread of page) await threads.delete(thread.thread_id, threadFilter).catch(() => (kept += 1));
      }
    }
    ctx.status = 204;
  });

  router.post('/assistants/:assistantId/versions', async (ctx) => {
    const assistantId = assistantIdOf(services, ctx);
    const body = validatePart<{ limit: number; offset: number; metadata?: Record<string, unknown> | null }>(
      assistantVersionsBody,
      ctx.state.body,
      'body',
    );
    const filter = await filterFor(services, ctx, 'assistants', 'read', { assistant_id: assistantId });
    const versions = await assistantStore().versions(assistantId, { ...body, metadata: body.metadata ?? undefined }, filter);
    if (versions.length === 0) throw new NotFoundError(`Assistant "${assistantId}" not found.`);
    ctx.body = versions;
  });

  router.post('/assistants/:assistantId/latest', async (ctx) => {
    const assistantId = assistantIdOf(services, ctx);
    const input = ctx.query.version !== undefined ? { version: ctx.query.version } : ctx.state.body;
    const { version } = validatePart<{ version: number }>(assistantLatestInput, input, 'body');
    const filter = await filterFor(services, ctx, 'assistants', 'update', { assistant_id: assistantId, version });
    refuseSystem(services, assistantId);
    ctx.body = await assistantStore().setLatest(assistantId, version, filter);
  });
}
