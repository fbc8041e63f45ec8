/**
 * A thread's state and history (`useStream` reads `POST /threads/{id}/history` on its first render), state updates
 * outside a run, and copies. Reads are `threads:read`, updates `threads:update`; a copy is a read of the source and a
 * `threads:create` of the copy. A thread outside the caller's filter answers 404.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { STATE_UPDATE_EVENT } from '../../execution/threadFollower';
import { validatePart } from '@graphx/kit/http/validation';
import { NotFoundError } from '@graphx/kit/errors';
import type { HistoryQuery } from '../../execution/threadState';
import { checkpointIn, type CheckpointRef } from '../../execution/threadScope';
import {
  historyBody,
  historyQuery,
  stateAtCheckpointBody,
  stateUpdateBody,
  subgraphsQuery,
  threadCheckpointParams,
  threadIdInPath,
} from '../schemas';
import { filterFor, type RuntimeServices } from './context';

type SentCheckpoint = CheckpointRef & { thread_id?: string | null };

type HistoryInput = Omit<HistoryQuery, 'metadata' | 'checkpoint' | 'before'> & {
  metadata?: Record<string, unknown> | null;
  checkpoint?: SentCheckpoint | null;
  before?: string | SentCheckpoint | { configurable: SentCheckpoint } | null;
};

/** `before` as the checkpoint id it names (a checkpoint, or a config holding one, must be of the same thread). */
function beforeIn(threadId: string, before: HistoryInput['before']): string | undefined {
  if (!before) return undefined;
  if (typeof before === 'string') return before;
  const ref =
    'configurable' in before
      ? checkpointIn(threadId, before.configurable, ['body', 'before', 'configurable'])
      : checkpointIn(threadId, before, ['body', 'before']);
  return ref.checkpoint_id;
}

export function registerThreadStateRoutes(router: Router, services: RuntimeServices): void {
  const threadIdOf = (ctx: Koa.Context) => threadIdInPath(ctx.params);
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

  // What the thread's checkpoints occupy (storage/threadStorage.ts); a thread the caller cannot read is 404.
  router.get('/threads/:threadId/storage', async (ctx) => {
    const threadId = threadIdOf(ctx);
    if (!(await services.threads.get(threadId, await readFilter(ctx, threadId)))) {
      throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    }
    ctx.body = await services.threadStorage(threadId);
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
    const body = validatePart<{ checkpoint?: SentCheckpoint | null; subgraphs?: boolean }>(
      stateAtCheckpointBody,
      ctx.state.body,
      'body',
    );
    const checkpoint = checkpointIn(threadId, body.checkpoint, ['body', 'checkpoint']);
    const filter = await readFilter(ctx, threadId);
    answerJson(ctx, await services.threadState.get(threadId, filter, checkpoint, Boolean(body.subgraphs)));
  });

  router.post('/threads/:threadId/state', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const body = validatePart<{ values?: unknown; as_node?: string; checkpoint_id?: string; checkpoint?: SentCheckpoint | null }>(
      stateUpdateBody,
      ctx.state.body,
      'body',
    );
    const checkpoint = {
      ...checkpointIn(threadId, body.checkpoint, ['body', 'checkpoint']),
      ...(body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : {}),
    };
    const filter = await filterFor(services, ctx, 'threads', 'update', { thread_id: threadId, ...body });
    ctx.body = await services.threadState.update(threadId, filter, { values: body.values, asNode: body.as_node, checkpoint });
    // Thread streams show the update (`state_update`, as the Python server publishes it).
    const state = await services.threadState.get(threadId, filter, {}, false);
    const event = { seq: 0, event: STATE_UPDATE_EVENT, json: `{"state":${state},"thread_id":"${threadId}"}` };
    await services.runEvents.appendToThread(threadId, [event]);
  });

  router.post('/threads/:threadId/history', async (ctx) => {
    const threadId = threadIdOf(ctx);
    const body = validatePart<HistoryInput>(historyBody, ctx.state.body, 'body');
    const query: HistoryQuery = {
      limit: body.limit,
      before: beforeIn(threadId, body.before),
      metadata: body.metadata ?? undefined,
      checkpoint: checkpointIn(threadId, body.checkpoint, ['body', 'checkpoint']),
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
    // 404 for a thread that is missing or outside the caller's filter alike, as the Python server answers (the JS dev
    // server says 409); the same answer for both reveals nothing of other users' threads.
    const source = await services.threads.get(threadId, filter);
    if (!source) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    await filterFor(services, ctx, 'threads', 'create', { thread_id: null, metadata: { ...source.metadata } });
    const copy = await services.threads.copy(threadId, filter);
    if (!copy) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    ctx.body = copy;
  });
}
