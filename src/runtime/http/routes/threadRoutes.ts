/**
 * Threads: create, read, update, delete, search (POST /threads/search and its GET /threads form), count, state and
 * runs. The authorization filter of the caller applies to every one; a thread outside it answers 404.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { validatePart } from '../../../api/validation';
import { NotFoundError } from '../../../domain/errors';
import type { ThreadQuery, ThreadStatus } from '../../storage/threadStore';
import {
  runListQuery,
  threadCountBody,
  threadCreateBody,
  threadIdParams,
  threadPatchBody,
  threadSearchBody,
  threadSearchQuery,
} from '../schemas';
import { filterFor, type RuntimeServices } from './context';

interface SearchInput {
  metadata?: Record<string, unknown> | null;
  values?: Record<string, unknown> | null;
  status?: ThreadStatus;
  ids?: string[];
  limit: number;
  offset: number;
  sort_by: ThreadQuery['sortBy'];
  sort_order: ThreadQuery['sortOrder'];
}

/** How long deleting a busy thread waits for its run to stop before dropping the checkpoints anyway. */
const STOP_WAIT_MS = 5_000;

const threadNotFound = (threadId: string) => new NotFoundError(`Thread with ID ${threadId} not found.`);

export function registerThreadRoutes(router: Router, services: RuntimeServices): void {
  const search = async (ctx: Koa.Context, input: SearchInput) => {
    const filter = await filterFor(services, ctx, 'threads', 'search', { ...input });
    const { threads, total } = await services.threads.search(
      {
        metadata: input.metadata ?? undefined,
        values: input.values ?? undefined,
        status: input.status,
        ids: input.ids,
        limit: input.limit,
        offset: input.offset,
        sortBy: input.sort_by,
        sortOrder: input.sort_order,
      },
      filter,
    );
    ctx.set('X-Pagination-Total', String(total));
    if (input.offset + threads.length < total) ctx.set('X-Pagination-Next', String(input.offset + threads.length));
    ctx.body = threads;
  };

  router.post('/threads', async (ctx) => {
    const body = validatePart<{
      thread_id?: string;
      metadata: Record<string, unknown> | null;
      if_exists: 'raise' | 'do_nothing';
    }>(threadCreateBody, ctx.state.body, 'body');
    const value = { thread_id: body.thread_id, metadata: { ...(body.metadata ?? {}) }, if_exists: body.if_exists };
    const filter = await filterFor(services, ctx, 'threads', 'create', value);
    ctx.body = await services.threads.create(
      { threadId: body.thread_id, metadata: value.metadata, ifExists: body.if_exists },
      filter,
    );
  });

  router.post('/threads/search', async (ctx) => search(ctx, validatePart<SearchInput>(threadSearchBody, ctx.state.body, 'body')));
  router.get('/threads', async (ctx) => search(ctx, validatePart<SearchInput>(threadSearchQuery, { ...ctx.query }, 'query')));

  router.post('/threads/count', async (ctx) => {
    const body = validatePart<SearchInput>(threadCountBody, ctx.state.body, 'body');
    const filter = await filterFor(services, ctx, 'threads', 'search', { ...body });
    ctx.body = await services.threads.count(
      { metadata: body.metadata ?? undefined, values: body.values ?? undefined, status: body.status },
      filter,
    );
  });

  router.get('/threads/:threadId', async (ctx) => {
    const { threadId } = validatePart<{ threadId: string }>(threadIdParams, ctx.params, 'path');
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    ctx.body =
      (await services.threads.get(threadId, filter)) ??
      (() => {
        throw threadNotFound(threadId);
      })();
  });

  router.patch('/threads/:threadId', async (ctx) => {
    const { threadId } = validatePart<{ threadId: string }>(threadIdParams, ctx.params, 'path');
    const body = validatePart<{ metadata: Record<string, unknown> }>(threadPatchBody, ctx.state.body, 'body');
    const value = { thread_id: threadId, metadata: { ...body.metadata } };
    const filter = await filterFor(services, ctx, 'threads', 'update', value);
    const thread = await services.threads.patchMetadata(threadId, value.metadata, filter);
    if (!thread) throw threadNotFound(threadId);
    ctx.body = thread;
  });

  router.delete('/threads/:threadId', async (ctx) => {
    const { threadId } = validatePart<{ threadId: string }>(threadIdParams, ctx.params, 'path');
    const filter = await filterFor(services, ctx, 'threads', 'delete', { thread_id: threadId });
    const deleted = await services.threads.delete(threadId, filter);
    if (!deleted) throw threadNotFound(threadId);
    // A run still busy on the thread is stopped first; its checkpoints are then deleted with the thread's.
    if (deleted.busyRunId) await services.coordinator.stopRunOfDeletedThread(threadId, deleted.busyRunId, STOP_WAIT_MS);
    await services.deleteCheckpoints(threadId);
    ctx.status = 204;
  });

  router.get('/threads/:threadId/runs', async (ctx) => {
    const { threadId } = validatePart<{ threadId: string }>(threadIdParams, ctx.params, 'path');
    const query = validatePart<{ limit: number; offset: number }>(runListQuery, { ...ctx.query }, 'query');
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    if (!(await services.threads.get(threadId, filter))) throw threadNotFound(threadId);
    ctx.body = await services.runs.listForThread(threadId, query.limit, query.offset);
  });
}
