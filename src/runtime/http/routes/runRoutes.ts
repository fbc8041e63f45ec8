/** Runs: streamed (SSE) or waited for, threadless or on a thread. */
import type Router from '@koa/router';
import type Koa from 'koa';
import { validatePart } from '../../../http/validation';
import type { ApiStreamMode } from '../../execution/graphStream';
import type { RunRequest } from '../../execution/runService';
import { toWireJson } from '../../execution/serialize';
import { fastRunBody } from '../runBodyFastPath';
import { runBody, threadIdParams } from '../schemas';
import { respondWithEvents } from '../sse';
import { userOf, type RuntimeServices } from './context';

type RawRunBody = Omit<RunRequest, 'stream_mode'> & { stream_mode?: ApiStreamMode | ApiStreamMode[] };

/** The run body of the request, validated (the common shape without Joi, see runBodyFastPath.ts). */
export function readRunRequest(ctx: Koa.Context): RunRequest {
  const body = (fastRunBody(ctx.state.body) as RawRunBody | null) ?? validatePart<RawRunBody>(runBody, ctx.state.body, 'body');
  const modes = body.stream_mode === undefined ? [] : Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode];
  return { ...body, stream_mode: modes.length > 0 ? modes : ['values'] };
}

function threadIdOf(ctx: Koa.Context): string | null {
  return ctx.params.threadId ? validatePart<{ threadId: string }>(threadIdParams, ctx.params, 'path').threadId : null;
}

export function registerRunRoutes(router: Router, services: RuntimeServices): void {
  const stream = async (ctx: Koa.Context) => {
    const threadId = threadIdOf(ctx);
    const request = readRunRequest(ctx);
    const prepared = await services.runService.prepare(userOf(ctx), threadId, request);
    const location = threadId ? `/threads/${threadId}/runs/${prepared.run.run_id}` : `/runs/${prepared.run.run_id}`;
    respondWithEvents(
      ctx,
      location,
      (signal) => services.runService.execute(prepared, signal),
      request.on_disconnect === 'cancel',
      services.metrics.activeStreams,
    );
  };

  const wait = async (ctx: Koa.Context) => {
    const threadId = threadIdOf(ctx);
    const request = readRunRequest(ctx);
    const prepared = await services.runService.prepare(userOf(ctx), threadId, request);
    const abort = new AbortController();
    if (request.on_disconnect === 'cancel') ctx.res.once('close', () => ctx.res.writableFinished || abort.abort());
    const result = await services.runService.wait(prepared, abort.signal);
    ctx.set('Content-Location', threadId ? `/threads/${threadId}/runs/${prepared.run.run_id}` : `/runs/${prepared.run.run_id}`);
    ctx.type = 'application/json';
    ctx.body = toWireJson(result);
  };

  router.post('/runs/stream', stream);
  router.post('/threads/:threadId/runs/stream', stream);
  router.post('/runs/wait', wait);
  router.post('/threads/:threadId/runs/wait', wait);
}
