/**
 * A thread's state and history (`useStream` reads `POST /threads/{id}/history` on its first render), state updates
 * outside a run, and copies. Reads are `threads:read`, updates `threads:update`; a copy is a read of the source and a
 * `threads:create` of the copy. A thread outside the caller's filter answers 404.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { STATE_UPDATE_EVENT } from '../../execution/threadFollower';
import { validatePart } from '../../../http/validation';
import { ConflictError } from '../../../errors';
import type { CheckpointRef, HistoryQuery } from '../../execution/threadState';
import {
  historyBody,
  historyQuery,
  stateAtCheckpointBody,
  stateUpdateBody,
  subgraphsQuery,
  threadCheckpointParams,
  threadIdParams,
} from '../schemas';
import { filterFor, type RuntimeServices } from './context';

type HistoryInput = Omit<HistoryQuery, 'metadata' | 'checkpoint'> & {
  metadata?: Record<string, unknown> | null;
  checkpoint?: CheckpointRef | null;
};

export function registerThreadStateRoutes(router: Router, services: RuntimeServices): void {
  const threadIdOf = (ctx: Koa.Context) => validatePart<{ threadId: string }>(threadIdParams, ctx.params, 'path').threadId;
  const readFilter = (ctx: Koa.Context, threadId: string) => filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
  const answerJson = (ctx: Koa.Context, json: string) => {
    ctx.type = 'application/json';
    ctx.body = json;
  };

  router.get('/threads/:threadId/state', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const { subgraphs } = validatePart<{ subgraphs: boolean }>(subgraphsQuery, { ...ctx.query }, 'query');
    answerJson(ctx, await services.threadState.get(threadId, await readFilter(ctx, threadId), {}, subgraphs));
  });

  router.get('/threads/:threadId/state/:checkpointId', async (ctx) => {
    const { threadId, checkpointId } = validatePart<{ threadId: string; checkpointId: string }>(
      threadCheckpointParams,
      ctx.params,
      'path',
    );
    const { subgraphs } = validatePart<{ subgraphs: boolean }>(subgraphsQuery, { ...ctx.query }, 'query');
    const filter = await readFilter(ctx, threadId);
    answerJson(ctx, await services.threadState.get(threadId, filter, { checkpoint_id: checkpointId }, subgraphs));
  });

  router.post('/threads/:threadId/state/checkpoint', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const body = validatePart<{ checkpoint?: CheckpointRef | null; subgraphs?: boolean }>(
      stateAtCheckpointBody,
      ctx.state.body,
      'body',
    );
    const filter = await readFilter(ctx, threadId);
    answerJson(ctx, await services.threadState.get(threadId, filter, body.checkpoint ?? {}, Boolean(body.subgraphs)));
  });

  router.post('/threads/:threadId/state', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const body = validatePart<{ values?: unknown; as_node?: string; checkpoint_id?: string; checkpoint?: CheckpointRef | null }>(
      stateUpdateBody,
      ctx.state.body,
      'body',
    );
    const filter = await filterFor(services, ctx, 'threads', 'update', { thread_id: threadId, ...body });
    const checkpoint = { ...(body.checkpoint ?? {}), ...(body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : {}) };
    ctx.body = await services.threadState.update(threadId, filter, { values: body.values, asNode: body.as_node, checkpoint });
    // Thread streams show the update (`state_update`, as the Python server publishes it).
    const state = await services.threadState.get(threadId, filter, {}, false);
    const event = { seq: 0, event: STATE_UPDATE_EVENT, json: `{"state":${state},"thread_id":"${threadId}"}` };
    await services.eventStore.append(null, threadId, [event]);
  });

  router.post('/threads/:threadId/history', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const body = validatePart<HistoryInput>(historyBody, ctx.state.body, 'body');
    const query: HistoryQuery = {
      limit: body.limit,
      before: body.before ?? undefined,
      metadata: body.metadata ?? undefined,
      checkpoint: body.checkpoint ?? undefined,
    };
    answerJson(ctx, await services.threadState.history(threadId, await readFilter(ctx, threadId), query));
  });

  router.get('/threads/:threadId/history', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const query = validatePart<HistoryQuery>(historyQuery, { ...ctx.query }, 'query');
    answerJson(ctx, await services.threadState.history(threadId, await readFilter(ctx, threadId), query));
  });

  router.post('/threads/:threadId/copy', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const filter = await readFilter(ctx, threadId);
    // 409 for a thread that is missing or outside the caller's filter alike, as the JS server answers a copy (its
    // auth suite: another user's copy is "HTTP 409"); the same answer for both reveals nothing of other users' threads.
    const source = await services.threads.get(threadId, filter);
    if (!source) throw new ConflictError(`Thread with ID ${threadId} not found.`);
    await filterFor(services, ctx, 'threads', 'create', { thread_id: null, metadata: { ...source.metadata } });
    const copy = await services.threads.copy(threadId, filter);
    if (!copy) throw new ConflictError(`Thread with ID ${threadId} not found.`);
    ctx.body = copy;
  });
}
