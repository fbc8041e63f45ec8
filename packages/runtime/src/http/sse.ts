/**
 * Server-sent events as CONTRACT §6 fixes them: `event: <name>` and one compact `data:` line per event. The frames are
 * written straight to the Node response (Koa steps aside, `ctx.respond = false`): a PassThrough body piped by Koa cost
 * a stream, a pipeline and one socket write per event on every run. Frames produced in the same turn of the event
 * loop leave in one write; a slow reader applies backpressure (the run waits for `drain`). The response's close ends
 * the run when `on_disconnect` is `cancel`.
 */
import type { ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { StreamEvent } from '../execution/graphStream';
import { takeWireJson, toWireJson } from '../execution/serialize';
import { logger } from '@graphx/kit/logger';
import { forwardedPrefix } from './forwarded';

/** One SSE frame (with its `id:` line when the event has one). JSON never contains a raw newline: one data line. */
export function sseFrame(event: StreamEvent & { id?: string }): string {
  // The order of the reference's frames (reference/peer-sse-samples.md): event, data, then id.
  const id = event.id === undefined ? '' : `id: ${event.id}\n`;
  return `event: ${event.event}\ndata: ${takeWireJson(event) ?? toWireJson(event.data)}\n${id}\n`;
}

// Proxies drop connections idle for long (often 30-60 s); a comment line every few seconds of silence keeps a quiet
// run's stream open. One timer serves every open stream, so a run costs a Set insert and delete, not a timer.
const HEARTBEAT_MS = 10_000;
const openStreams = new Map<ServerResponse, { lastWrite: number }>();
let heartbeatTimer: NodeJS.Timeout | null = null;

function watchForHeartbeat(res: ServerResponse): { wrote: () => void; stop: () => void } {
  const entry = { lastWrite: Date.now() };
  openStreams.set(res, entry);
  if (!heartbeatTimer) {
    heartbeatTimer = setInterval(() => {
      const idleSince = Date.now() - HEARTBEAT_MS;
      for (const [stream, state] of openStreams) {
        if (state.lastWrite > idleSince || stream.destroyed) continue;
        state.lastWrite = Date.now();
        stream.write(': heartbeat\n\n');
      }
    }, HEARTBEAT_MS / 2);
    heartbeatTimer.unref();
  }
  return {
    wrote: () => (entry.lastWrite = Date.now()),
    stop: () => {
      openStreams.delete(res);
      if (openStreams.size === 0 && heartbeatTimer) {
        clearInterval(heartbeatTimer);
        heartbeatTimer = null;
      }
    },
  };
}

/**
 * Answers with an event stream fed by `events`. The run is aborted if the client goes away before the end and
 * `cancelOnDisconnect` is set.
 */
export function respondWithEvents(
  ctx: Koa.Context,
  /** `Content-Location`: the run; `location`: where a dropped stream is resumed (GET with Last-Event-ID), if anywhere. */
  where: string | { contentLocation: string; location?: string | null },
  events: (signal: AbortSignal) => AsyncGenerator<StreamEvent & { id?: string }>,
  cancelOnDisconnect: boolean,
  activeStreams?: { inc(): void; dec(): void },
): void {
  const res = ctx.res;
  const abort = new AbortController();
  let finished = false;
  ctx.status = 200;
  ctx.respond = false;
  const { contentLocation, location } = typeof where === 'string' ? { contentLocation: where, location: null } : where;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'Content-Location': forwardedPrefix(ctx) + contentLocation,
    // The SDK resumes at apiUrl + Location, and its apiUrl already holds the gateway's prefix: none here.
    ...(location ? { Location: location } : {}),
  });
  res.once('close', () => {
    if (!finished && cancelOnDisconnect) abort.abort(new Error('client disconnected'));
  });
  const writer = batchedWriter(res);
  activeStreams?.inc();
  res.once('close', () => activeStreams?.dec());
  void (async () => {
    try {
      for await (const event of events(abort.signal)) {
        if (res.destroyed) {
          takeWireJson(event); // not written: not kept either (serialize.ts)
          continue;
        }
        await writer.write(sseFrame(event));
      }
    } catch (error) {
      logger.error({ err: error }, 'run stream failed after it started');
    } finally {
      finished = true;
      writer.end();
    }
  })();
}

/**
 * Frames written together: events that arrive within one turn of the event loop go out as one write (one syscall,
 * one TCP segment when small); a full socket buffer makes the next write wait for `drain`. Heartbeats are sent while
 * nothing else is.
 */
function batchedWriter(res: ServerResponse): { write: (frame: string) => Promise<void>; end: () => void } {
  const heartbeat = watchForHeartbeat(res);
  let pending = '';
  let flushScheduled = false;
  let drained: Promise<void> | null = null;
  const flush = () => {
    flushScheduled = false;
    if (pending === '' || res.destroyed) return;
    heartbeat.wrote();
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
  return {
    write: async (frame) => {
      pending += frame;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
      if (drained) await drained;
    },
    end: () => {
      heartbeat.stop();
      const last = pending;
      pending = '';
      if (!res.destroyed) res.end(last);
    },
  };
}
