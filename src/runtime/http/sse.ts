/**
 * Server-sent events as CONTRACT §6 fixes them: `event: <name>` and one compact `data:` line per event. `ctx.body`
 * is the stream; the response's close ends the run when `on_disconnect` is `cancel`.
 */
import { PassThrough } from 'node:stream';
import type Koa from 'koa';
import type { StreamEvent } from '../execution/graphStream';
import { toWireJson } from '../execution/serialize';
import { logger } from '../../logger';

/** One SSE frame. JSON never contains a raw newline, so the data is always one line. */
export function sseFrame(event: StreamEvent): string {
  return `event: ${event.event}\ndata: ${toWireJson(event.data)}\n\n`;
}

/**
 * Answers with an event stream fed by `events`. `onDisconnect` runs if the client goes away before the end.
 */
export function respondWithEvents(
  ctx: Koa.Context,
  contentLocation: string,
  events: (signal: AbortSignal) => AsyncGenerator<StreamEvent>,
  cancelOnDisconnect: boolean,
): void {
  const body = new PassThrough();
  const abort = new AbortController();
  let finished = false;
  ctx.status = 200;
  ctx.set({
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'Content-Location': contentLocation,
  });
  ctx.body = body;
  ctx.res.once('close', () => {
    if (!finished && cancelOnDisconnect) abort.abort(new Error('client disconnected'));
  });
  void (async () => {
    try {
      for await (const event of events(abort.signal)) {
        if (!body.destroyed) body.write(sseFrame(event));
      }
    } catch (error) {
      logger.error({ err: error }, 'run stream failed after it started');
    } finally {
      finished = true;
      body.end();
    }
  })();
}
