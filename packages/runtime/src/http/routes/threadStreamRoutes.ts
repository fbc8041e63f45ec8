/**
 * The thread stream (`GET /threads/{id}/stream`, SDK `threads.joinStream`): every run's events on the thread as they
 * come, and its state updates, until the client leaves (threadFollower.ts). Checks `threads:read` on the thread; a
 * thread outside the filter is 404.
 */
import type Router from '@koa/router';
import { NotFoundError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import { followThread, threadStreamStart, type ThreadStreamMode } from '../../execution/threadFollower';
import { queryList } from '../queryList';
import { threadIdInPath, threadStreamQuery } from '../schemas';
import { respondWithEvents } from '../sse';
import { filterFor, type RuntimeServices } from './context';

export function registerThreadStreamRoutes(router: Router, services: RuntimeServices): void {
  router.get('/threads/:threadId/stream', async (ctx) => {
    const threadId = threadIdInPath(ctx.params);
    type Modes = ThreadStreamMode | ThreadStreamMode[];
    const query = validatePart<{ stream_mode?: Modes; stream_modes?: Modes }>(
      threadStreamQuery,
      { ...ctx.query, stream_mode: queryList(ctx.query.stream_mode), stream_modes: queryList(ctx.query.stream_modes) },
      'query',
    );
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    if (!(await services.threads.get(threadId, filter))) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    const modes = [query.stream_mode ?? query.stream_modes ?? 'run_modes'].flat();
    const afterId = await threadStreamStart(services.eventStore, threadId, ctx.get('Last-Event-ID') || null);
    const deps = { runEvents: services.runEvents, eventStore: services.eventStore };
    respondWithEvents(ctx, `/threads/${threadId}`, (signal) => followThread(deps, threadId, afterId, modes, signal), true);
    // A quiet thread may send nothing for a while: the client learns it is connected now, not at the first heartbeat.
    ctx.res.flushHeaders();
  });
}
