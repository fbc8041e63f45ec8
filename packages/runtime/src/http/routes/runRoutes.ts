/** Runs: streamed (SSE) or waited for, threadless or on a thread. */
import crypto from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import { validatePart } from '@graphx/kit/http/validation';
import type { AuthUser } from '../../auth/authUser';
import { UNSTOPPABLE, type ApiStreamMode } from '../../execution/graphStream';
import { followRun } from '../../execution/runFollower';
import type { PreparedRun, RunRequest } from '../../execution/runService';
import type { Run } from '../../storage/runStore';
import { toWireJson } from '../../execution/serialize';
import { withRequestHeaders } from '../requestHeaders';
import { fastRunBody } from '../runBodyFastPath';
import { scopedToThread } from '../../execution/threadScope';
import { executeHere as executeRunHere, prepareOrQueue as prepareRun } from '../../execution/streamedRuns';
import { runBody, threadIdInPath } from '../schemas';
import { respondWithEvents } from '../sse';
import { userOf, type RuntimeServices } from './context';
import { forwardedPrefix } from '../forwarded';

export type RawRunBody = Omit<RunRequest, 'stream_mode'> & { stream_mode?: ApiStreamMode | ApiStreamMode[] };

/**
 * The run body of the request, validated (the common shape without Joi, see runBodyFastPath.ts), its `checkpoint`
 * checked against the thread the run is on (`threadId`, from the authorized path; null for a threadless run).
 */
export function readRunRequest(ctx: Koa.Context, threadId: string | null): RunRequest {
  const body = (fastRunBody(ctx.state.body) as RawRunBody | null) ?? validatePart<RawRunBody>(runBody, ctx.state.body, 'body');
  return withStreamModes(withRequestHeaders(scopedToThread(body, threadId, ['body']), ctx));
}

/** A validated run body with `stream_mode` as a list (`values` when none was asked for). */
export function withStreamModes(body: RawRunBody): RunRequest {
  const modes = body.stream_mode === undefined ? [] : Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode];
  // `protocol` marks a run started by a protocol-v2 command (the server sets it); a client cannot ask for it here.
  const { protocol: _serverOnly, ...rest } = body;
  return { ...rest, stream_mode: modes.length > 0 ? modes : ['values'] };
}

function threadIdOf(ctx: Koa.Context): string | null {
  return ctx.params.threadId ? threadIdInPath(ctx.params) : null;
}

/**
 * The thread a run request runs on and its body. A stateless run with `on_completion: keep` runs on a new thread that
 * stays afterwards (the Python server keeps the temporary thread it made; `delete`, the default, leaves none).
 */
export function readRunTarget(ctx: Koa.Context): { threadId: string | null; request: RunRequest } {
  const pathThreadId = threadIdOf(ctx);
  const request = readRunRequest(ctx, pathThreadId);
  if (pathThreadId || request.on_completion !== 'keep') return { threadId: pathThreadId, request };
  return { threadId: crypto.randomUUID(), request: { ...request, if_not_exists: 'create' } };
}

export function registerRunRoutes(router: Router, services: RuntimeServices): void {
  const prepareOrQueue = (user: AuthUser | null, threadId: string | null, request: RunRequest) =>
    prepareRun(services, user, threadId, request);
  const executeHere = (prepared: PreparedRun, signal: AbortSignal) => executeRunHere(services, prepared, signal, true);

  async function* followQueued(run: Run, cancelOnDisconnect: boolean, signal: AbortSignal) {
    const deps = {
      runEvents: services.runEvents,
      eventStore: services.eventStore,
      threads: services.threads,
      getRun: services.runQueue.get.bind(services.runQueue),
    };
    try {
      yield* followRun(deps, run, { lastEventId: '-1', streamModes: null }, signal);
    } finally {
      services.backgroundRuns.unreserve(run.run_id);
    }
    if (signal.aborted && cancelOnDisconnect) await services.backgroundRuns.cancel(run.thread_id, [run.run_id], 'interrupt');
  }

  const stream = async (ctx: Koa.Context) => {
    const { threadId, request } = readRunTarget(ctx);
    const { prepared, queued } = await prepareOrQueue(userOf(ctx), threadId, request);
    const runId = (prepared?.run ?? queued!).run_id;
    const location = threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;
    const cancelOnDisconnect = request.on_disconnect === 'cancel';
    respondWithEvents(
      ctx,
      // A run on a thread can be joined (GET …/stream with Last-Event-ID): `Location` is where the JS SDK reconnects a
      // dropped stream, as the Python server names it. A streamed threadless run is not kept, so it has none.
      { contentLocation: location, location: threadId ? `${location}/stream` : null },
      (signal) =>
        prepared
          ? executeHere(prepared, threadId || cancelOnDisconnect ? signal : UNSTOPPABLE)
          : followQueued(queued!, cancelOnDisconnect, signal),
      cancelOnDisconnect,
      services.metrics.activeStreams,
    );
  };

  /** The final values of a run queued behind others (`enqueue` on a busy thread): it waits in the database, unbounded. */
  const waitForQueued = async (run: Run, cancelOnDisconnect: boolean, signal: AbortSignal): Promise<unknown> => {
    let last: unknown = null;
    for await (const event of followQueued(run, cancelOnDisconnect, signal)) {
      if (event.event === 'values') last = event.data;
      if (event.event === 'error') return { __error__: event.data };
    }
    return last ?? (await services.threads.get(run.thread_id!, {}))?.values ?? null;
  };

  const wait = async (ctx: Koa.Context) => {
    const target = readRunTarget(ctx);
    const threadId = target.threadId;
    const request = { ...target.request, stream_mode: ['values'] as ApiStreamMode[] };
    const { prepared, queued } = await prepareOrQueue(userOf(ctx), threadId, request);
    const abort = new AbortController();
    const cancelOnDisconnect = request.on_disconnect === 'cancel';
    ctx.res.once('close', () => ctx.res.writableFinished || abort.abort());
    let result: unknown;
    if (queued) {
      result = await waitForQueued(queued, cancelOnDisconnect, abort.signal);
    } else {
      const runId = prepared!.run.run_id;
      // A run on a thread shows in the thread's stream (RunEvents keeps its events for it).
      if (threadId) services.runEvents.open(runId, { threadId });
      const runSignal = cancelOnDisconnect ? abort.signal : threadId ? new AbortController().signal : UNSTOPPABLE;
      result = await services.runService
        .wait(prepared!, runSignal, threadId ? (event) => services.runEvents.publish(runId, event) : undefined)
        .finally(() => threadId && void services.runEvents.close(runId));
    }
    const runId = (prepared?.run ?? queued!).run_id;
    ctx.set('Content-Location', forwardedPrefix(ctx) + (threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`));
    ctx.type = 'application/json';
    ctx.body = toWireJson(result);
  };

  router.post('/runs/stream', stream);
  router.post('/threads/:threadId/runs/stream', stream);
  router.post('/runs/wait', wait);
  router.post('/threads/:threadId/runs/wait', wait);
}
