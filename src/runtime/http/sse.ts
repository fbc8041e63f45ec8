/**
 * Server-sent events as CONTRACT §6 fixes them: `event: <name>` and one compact `data:` line per event. The frames are
 * written straight to the Node response (Koa steps aside, `ctx.respond = false`): a PassThrough body piped by Koa cost
 * a stream, a pipeline and one socket write per event on every run. Frames produced in the same turn of the event
 * loop leave in one write; a slow reader applies backpressure (the run waits for `drain`). The response's close ends
 * the run when `on_disconnect` is `cancel`.
 */
import type Koa from 'koa';
import type { StreamEvent } from '../execution/graphStream';
import { toWireJson } from '../execution/serialize';
import { logger } from '../../logger';

/** One SSE frame. JSON never contains a raw newline, so the data is always one line. */
export function sseFrame(event: StreamEvent): string {
  return `event: ${event.event}\ndata: ${toWireJson(event.data)}\n\n`;
}

/**
 * Answers with an event stream fed by `events`. The run is aborted if the client goes away before the end and
 * `cancelOnDisconnect` is set.
 */
export function respondWithEvents(
  ctx: Koa.Context,
  contentLocation: string,
  events: (signal: AbortSignal) => AsyncGenerator<StreamEvent>,
  cancelOnDisconnect: boolean,
  activeStreams?: { inc(): void; dec(): void },
): void {
  const res = ctx.res;
  const abort = new AbortController();
  let finished = false;
  let pending = '';
  let flushScheduled = false;
  let drained: Promise<void> | null = null;
  ctx.status = 200;
  ctx.respond = false;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'Content-Location': contentLocation,
  });
  res.once('close', () => {
    if (!finished && cancelOnDisconnect) abort.abort(new Error('client disconnected'));
  });
  const flush = () => {
    flushScheduled = false;
    if (pending === '' || res.destroyed) return;
    const chunk = pending;
    pending = '';
    if (!res.write(chunk) && !drained) {
      drained = new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          drained = null;
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  };
  activeStreams?.inc();
  res.once('close', () => activeStreams?.dec());
  void (async () => {
    try {
      for await (const event of events(abort.signal)) {
        if (res.destroyed) continue;
        pending += sseFrame(event);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
        if (drained) await drained;
      }
    } catch (error) {
      logger.error({ err: error }, 'run stream failed after it started');
    } finally {
      finished = true;
      const last = pending;
      pending = '';
      if (!res.destroyed) res.end(last);
    }
  })();
}
