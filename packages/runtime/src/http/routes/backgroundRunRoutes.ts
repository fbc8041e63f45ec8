/**
 * The run lifecycle beyond one streamed request: background runs, reading and deleting a run, cancel (one or many),
 * join (wait for the end) and join stream (from `Last-Event-ID` when given). Thread-bound routes check
 * `threads:read` (`threads:create_run` for creation) on the thread; a thread outside the filter is 404 (inside the
 * stream for join stream).
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { validatePart } from '@graphx/kit/http/validation';
import { ConflictError, NotFoundError } from '@graphx/kit/errors';
import { FINISHED_STATUSES } from '../../execution/backgroundRuns';
import { followRun } from '../../execution/runFollower';
import { queryList } from '../queryList';
import {
  bulkCancelBody,
  bulkCancelQuery,
  cancelQuery,
  joinStreamQuery,
  runBatchBody,
  runIdParams,
  threadRunParams,
} from '../schemas';
import { respondWithEvents } from '../sse';
import { filterFor, userOf, type RuntimeServices } from './context';
import { withRequestHeaders } from '../requestHeaders';
import { scopedToThread } from '../../execution/threadScope';
import { readRunTarget, withStreamModes, type RawRunBody } from './runRoutes';
import { forwardedPrefix } from '../forwarded';

const JOIN_TIMEOUT_MS = 24 * 3600_000;
const runNotFound = (runId: string) => new NotFoundError(`Run ${runId} not found.`);
const threadNotFound = (threadId: string) => new NotFoundError(`Thread with ID ${threadId} not found.`);

export function registerBackgroundRunRoutes(router: Router, services: RuntimeServices): void {
  const { backgroundRuns } = services;

  /** The thread-bound run ids of the path, once the thread is known to be visible to the caller. */
  const visibleRun = async (ctx: Koa.Context, action = 'read') => {
    const { threadId, runId } = validatePart<{ threadId: string; runId: string }>(threadRunParams, ctx.params, 'path');
    const filter = await filterFor(services, ctx, 'threads', action, { thread_id: threadId, run_id: runId });
    if (!(await services.threads.get(threadId, filter))) throw threadNotFound(threadId);
    return { threadId, runId };
  };

  const create = async (ctx: Koa.Context) => {
    const { threadId, request } = readRunTarget(ctx);
    const run = await backgroundRuns.create(userOf(ctx), threadId, request);
    ctx.set(
      'Content-Location',
      forwardedPrefix(ctx) + (threadId ? `/threads/${threadId}/runs/${run.run_id}` : `/runs/${run.run_id}`),
    );
    ctx.body = run;
  };
  router.post('/threads/:threadId/runs', create);
  router.post('/runs', create);

  // Several stateless background runs at once; every assistant is checked before any run is queued.
  router.post('/runs/batch', async (ctx) => {
    const items = Array.isArray(ctx.state.body) ? (ctx.state.body as unknown[]).map(snakeCaseKeys) : ctx.state.body;
    const requests = validatePart<RawRunBody[]>(runBatchBody, items, 'body').map((body, index) =>
      withStreamModes(withRequestHeaders(scopedToThread(body, null, ['body', index]), ctx)),
    );
    for (const request of requests) await services.assistants.forRun(request.assistant_id, userOf(ctx));
    const runs = [];
    for (const request of requests) runs.push(await backgroundRuns.create(userOf(ctx), null, request));
    ctx.body = runs;
  });

  router.get('/threads/:threadId/runs/:runId', async (ctx) => {
    const { threadId, runId } = await visibleRun(ctx);
    ctx.body = (await services.runQueue.get(runId, threadId)) ?? throwError(runNotFound(runId));
  });

  router.delete('/threads/:threadId/runs/:runId', async (ctx) => {
    const { threadId, runId } = await visibleRun(ctx, 'delete');
    const run = (await services.runQueue.get(runId, threadId)) ?? throwError(runNotFound(runId));
    if (!FINISHED_STATUSES.has(run.status)) throw new ConflictError(`Run ${runId} is ${run.status}: cancel it first.`);
    await services.runQueue.delete(runId, threadId);
    ctx.status = 204;
  });

  router.post('/threads/:threadId/runs/:runId/cancel', async (ctx) => {
    const { threadId, runId } = await visibleRun(ctx, 'update');
    const { wait, action } = validatePart<{ wait: boolean; action: 'interrupt' | 'rollback' }>(
      cancelQuery,
      { ...ctx.query },
      'query',
    );
    if (!(await services.runQueue.get(runId, threadId))) throw runNotFound(runId);
    await backgroundRuns.cancel(threadId, [runId], action);
    if (wait) await backgroundRuns.waitUntilDone(runId, threadId, JOIN_TIMEOUT_MS);
    ctx.status = wait ? 204 : 202;
  });

  router.post('/runs/cancel', async (ctx) => {
    const body = validatePart<{
      thread_id?: string;
      run_ids?: string[];
      status?: 'pending' | 'running' | 'all';
      action: 'interrupt' | 'rollback';
    }>(bulkCancelBody, ctx.state.body, 'body');
    // The Python server (and its SDK's `cancel_many`) name the action in the query string; a body's is read too.
    const { action } = validatePart<{ action?: 'interrupt' | 'rollback' }>(bulkCancelQuery, ctx.query, 'query');
    if (action) body.action = action;
    const filter = await filterFor(services, ctx, 'threads', 'update', { ...body });
    if (body.thread_id && !(await services.threads.get(body.thread_id, filter))) {
      throw new NotFoundError(`Thread with ID ${body.thread_id} not found.`);
    }
    // Only runs the caller may see. Named runs must all be visible (any status), else nothing is cancelled and the
    // answer is 404, the same for another user's run as for a missing one; `status` alone acts on visible runs only.
    if (body.run_ids) {
      const named = await services.runQueue.visibleWithStatus(
        { threadId: body.thread_id ?? null, statuses: null, runIds: body.run_ids },
        filter,
      );
      const found = new Set(named.map((run) => run.run_id));
      const missing = [...new Set(body.run_ids)].filter((runId) => !found.has(runId));
      if (missing.length > 0) throw new NotFoundError(`Run(s) not found: ${missing.join(', ')}.`);
    }
    const statuses = body.status === 'all' || !body.status ? (['pending', 'running'] as const) : ([body.status] as const);
    const query = { threadId: body.thread_id ?? null, statuses: [...statuses], runIds: body.run_ids ?? null };
    for (const run of await services.runQueue.visibleWithStatus(query, filter)) {
      await backgroundRuns.cancel(run.thread_id, [run.run_id], body.action);
    }
    ctx.status = 204;
  });

  router.get('/threads/:threadId/runs/:runId/join', async (ctx) => {
    const { threadId, runId } = await visibleRun(ctx);
    const abort = new AbortController();
    // The response's close, not the request's: a GET request 'closes' as soon as its (empty) body is read.
    ctx.res.once('close', () => ctx.res.writableFinished || abort.abort());
    const run = await backgroundRuns.waitUntilDone(runId, threadId, JOIN_TIMEOUT_MS, abort.signal);
    if (!run) throw runNotFound(runId);
    const thread = await services.threads.get(threadId, {});
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(thread?.values ?? null);
  });

  /**
   * Join stream answers with a stream once its input is valid: a thread or run that is missing, or hidden by the
   * caller's filter (told apart from missing by nothing), is one `error` event whose message starts with `404: `,
   * as both anchors answer; the SDK's `runs.joinStream` yields it as an event.
   */
  const joinStream = async (ctx: Koa.Context, threadId: string | null, runId: string) => {
    const query = validatePart<{ cancel_on_disconnect: boolean; stream_mode?: string | string[] }>(
      joinStreamQuery,
      { ...ctx.query, stream_mode: queryList(ctx.query.stream_mode) },
      'query',
    );
    const location = threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;
    const notFound = (error: NotFoundError) =>
      respondWithEvents(
        ctx,
        location,
        async function* () {
          yield { event: 'error', data: { error: error.name, message: `404: ${error.message}` } };
        },
        false,
      );
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId ?? undefined, run_id: runId });
    if (threadId && !(await services.threads.get(threadId, filter))) return notFound(threadNotFound(threadId));
    // A threadless run is checked against its owner (runStore.ts RunOwner): another user's run is missing.
    const run = await services.runQueue.get(runId, threadId, filter);
    if (!run) return notFound(runNotFound(runId));
    const options = {
      lastEventId: ctx.get('Last-Event-ID') || null,
      streamModes: query.stream_mode === undefined ? null : [query.stream_mode].flat(),
    };
    const deps = {
      runEvents: services.runEvents,
      eventStore: services.eventStore,
      threads: services.threads,
      getRun: (id: string, thread: string | null) => services.runQueue.get(id, thread),
    };
    respondWithEvents(ctx, location, (signal) => followRun(deps, run, options, signal), false);
    if (query.cancel_on_disconnect) {
      ctx.res.once('close', () => void backgroundRuns.cancel(threadId, [runId], 'interrupt').catch(() => undefined));
    }
  };

  router.get('/threads/:threadId/runs/:runId/stream', async (ctx) => {
    const { threadId, runId } = validatePart<{ threadId: string; runId: string }>(threadRunParams, ctx.params, 'path');
    await joinStream(ctx, threadId, runId);
  });
  router.get('/runs/:runId/stream', async (ctx) => {
    const { runId } = validatePart<{ runId: string }>(runIdParams, ctx.params, 'path');
    await joinStream(ctx, null, runId);
  });
}

/**
 * The JS SDK's `runs.createBatch` sends its payload keys as written (`streamMode`, `multitaskStrategy`…) beside
 * `assistant_id`: they are read as their snake_case names (a snake_case key given too wins).
 */
function snakeCaseKeys(item: unknown): unknown {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
  const snake: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    const name = key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    if (name === key || !(name in item)) snake[name] = value;
  }
  return snake;
}

function throwError(error: Error): never {
  throw error;
}
