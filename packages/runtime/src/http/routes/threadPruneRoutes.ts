/**
 * `POST /threads/prune {thread_ids, strategy}` → `{pruned_count}`: `delete` removes whole threads (as DELETE
 * /threads/{id}); `keep_latest` keeps each thread with only its newest checkpoint. Threads outside the caller's
 * filter (`threads:delete`, `threads:update` for keep_latest), missing ones and, for keep_latest, busy ones are
 * skipped and not counted.
 */
import type Router from '@koa/router';
import { NotFoundError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import { ThreadService } from '../../execution/threadService';
import { threadPruneBody } from '../schemas';
import { filterFor, type RuntimeServices } from './context';

export function registerThreadPruneRoutes(router: Router, services: RuntimeServices): void {
  const threads = new ThreadService(services);

  router.post('/threads/prune', async (ctx) => {
    const body = validatePart<{ thread_ids: string[]; strategy: 'delete' | 'keep_latest' }>(
      threadPruneBody,
      ctx.state.body,
      'body',
    );
    const action = body.strategy === 'delete' ? 'delete' : 'update';
    let pruned = 0;
    for (const threadId of new Set(body.thread_ids)) {
      const filter = await filterFor(services, ctx, 'threads', action, { thread_id: threadId });
      if (body.strategy === 'delete') {
        const deleted = await threads.delete(threadId, filter).then(
          () => true,
          (error: unknown) => (error instanceof NotFoundError ? false : Promise.reject(error)),
        );
        if (deleted) pruned += 1;
        continue;
      }
      const thread = await services.threads.get(threadId, filter);
      if (!thread || thread.status === 'busy') continue;
      await services.pruneCheckpoints(threadId);
      pruned += 1;
    }
    ctx.body = { pruned_count: pruned };
  });
}
