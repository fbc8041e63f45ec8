/**
 * Threads: create, read, update, delete, search (POST /threads/search and its GET /threads form), count and runs
 * (state and history: threadStateRoutes.ts). The routes validate, ask the app's authorization handler for the
 * caller's filter, and hand over to the thread service (src/runtime/execution/threadService.ts); a thread outside the
 * filter answers 404.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { InputError, NotFoundError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import type { Superstep } from '../../execution/threadState';
import { ThreadService, type ThreadSearchInput } from '../../execution/threadService';
import {
  runListQuery,
  threadCountBody,
  threadCreateBody,
  threadGetQuery,
  threadIdInPath,
  threadPatchBody,
  threadSearchBody,
  threadSearchQuery,
} from '../schemas';
import type { RunStatus } from '../../storage/runStore';
import type { ThreadTtl } from '../../storage/threadStore';
import { filterFor, type RuntimeServices } from './context';
import { projectThread } from '../threadProjection';

const threadIdOf = (ctx: Koa.Context) => threadIdInPath(ctx.params);

/** Registers the thread routes on the runtime's router. */
export function registerThreadRoutes(router: Router, services: RuntimeServices): void {
  const threads = new ThreadService(services);

  const search = async (ctx: Koa.Context, input: ThreadSearchInput) => {
    const filter = await filterFor(services, ctx, 'threads', 'search', { ...input });
    const { threads: page, total } = await threads.search(input, filter);
    ctx.set('X-Pagination-Total', String(total));
    if (input.offset + page.length < total) ctx.set('X-Pagination-Next', String(input.offset + page.length));
    ctx.body =
      input.select || input.extract
        ? page.map((thread) => projectThread(thread as unknown as Record<string, unknown>, input.select, input.extract))
        : page;
  };

  // `supersteps` fill the new thread's history through its graph (`metadata.graph_id`), a `threads:update` of it.
  router.post('/threads', async (ctx) => {
    const body = validatePart<{
      thread_id?: string;
      metadata: Record<string, unknown> | null;
      if_exists: 'raise' | 'do_nothing';
      supersteps?: Superstep[] | null;
      ttl?: ThreadTtl | null;
    }>(threadCreateBody, ctx.state.body, 'body');
    const value = { thread_id: body.thread_id, metadata: { ...(body.metadata ?? {}) }, if_exists: body.if_exists };
    const supersteps = body.supersteps ?? [];
    if (supersteps.length > 0 && !services.graphs.find(String(value.metadata.graph_id ?? ''))) {
      throw new InputError('supersteps need metadata.graph_id naming a graph of the application.');
    }
    const filter = await filterFor(services, ctx, 'threads', 'create', value);
    const thread = await threads.create({ threadId: body.thread_id, metadata: value.metadata, ifExists: body.if_exists }, filter);
    if (body.ttl) await services.threads.setTtl(thread.thread_id, body.ttl, filter);
    if (supersteps.length > 0) {
      const update = { thread_id: thread.thread_id, supersteps };
      await services.threadState.bulkUpdate(
        thread.thread_id,
        await filterFor(services, ctx, 'threads', 'update', update),
        supersteps,
      );
    }
    ctx.body = supersteps.length > 0 ? await threads.get(thread.thread_id, filter) : thread;
  });

  router.post('/threads/search', async (ctx) =>
    search(ctx, validatePart<ThreadSearchInput>(threadSearchBody, ctx.state.body, 'body')),
  );
  router.get('/threads', async (ctx) =>
    search(ctx, validatePart<ThreadSearchInput>(threadSearchQuery, { ...ctx.query }, 'query')),
  );

  router.post('/threads/count', async (ctx) => {
    const body = validatePart<ThreadSearchInput>(threadCountBody, ctx.state.body, 'body');
    const filter = await filterFor(services, ctx, 'threads', 'search', { ...body });
    ctx.body = await threads.count(body, filter);
  });

  router.get('/threads/:threadId', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    const { include } = validatePart<{ include?: string | string[] }>(threadGetQuery, { ...ctx.query }, 'query');
    const thread = await threads.get(threadId, filter);
    // `?include=ttl`: the thread's TTL beside it (the Python server's), null when it has none.
    const wanted = [include ?? []].flat().flatMap((item) => item.split(','));
    ctx.body = wanted.includes('ttl') ? { ...thread, ttl: await services.threads.ttlOf(threadId) } : thread;
  });

  router.patch('/threads/:threadId', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const body = validatePart<{ metadata?: Record<string, unknown>; ttl?: ThreadTtl | null }>(
      threadPatchBody,
      ctx.state.body,
      'body',
    );
    const value = {
      thread_id: threadId,
      metadata: { ...(body.metadata ?? {}) },
      ...(body.ttl !== undefined ? { ttl: body.ttl } : {}),
    };
    const filter = await filterFor(services, ctx, 'threads', 'update', value);
    if (body.ttl !== undefined && !(await services.threads.setTtl(threadId, body.ttl, filter))) {
      throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    }
    ctx.body = body.metadata
      ? await threads.patchMetadata(threadId, value.metadata, filter)
      : await threads.get(threadId, filter);
  });

  router.delete('/threads/:threadId', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const filter = await filterFor(services, ctx, 'threads', 'delete', { thread_id: threadId });
    await threads.delete(threadId, filter);
    ctx.status = 204;
  });

  router.get('/threads/:threadId/runs', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const query = validatePart<{ limit: number; offset: number; status?: RunStatus }>(runListQuery, { ...ctx.query }, 'query');
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    ctx.body = await threads.runs(threadId, query, filter);
  });
}
