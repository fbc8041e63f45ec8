/**
 * Protocol v2 on every thread (`@langchain/react`'s `useStream`, the Python server's "Streaming" routes):
 * - `POST /threads/{id}/stream/events` `{channels, namespaces?, depth?, since?}`: the thread's events as SSE (`id:` =
 *   `seq`), from `since` or from the start of the latest run, then live, until the client leaves;
 * - `GET /threads/{id}/stream/events`: the same over a WebSocket (commands in, responses and subscribed events out;
 *   protocol/socketSession.ts), or, without an upgrade, as SSE with `?channels=a,b` (an EventSource can only GET);
 * - `POST /threads/{id}/commands`: one command, its response as JSON (protocol/commands.ts).
 * Reading routes dispatch `threads:read`; runs are authorized as runs (`threads:create_run`).
 */
import type Router from '@koa/router';
import Joi from 'joi';
import type Koa from 'koa';
import { NotFoundError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import { keepWireJson } from '../../execution/serialize';
import { asCommand, ProtocolCommands } from '../../protocol/commands';
import { followProtocolEvents, followStart } from '../../protocol/eventFollower';
import { openSocketSession, type SocketUpgrade } from '../../protocol/socketSession';
import { isChannel, matchesFilter, methodMayMatch, type EventFilter } from '../../protocol/wireEvents';
import { threadIdInPath } from '../schemas';
import { respondWithEvents } from '../sse';
import { filterFor, userOf, type RuntimeServices } from './context';

const channel = Joi.string().custom(
  (value: string, helpers) => (isChannel(value) ? value : helpers.error('any.only')),
  'channel',
);
const eventsBody = Joi.object({
  channels: Joi.array().items(channel).min(1).required(),
  namespaces: Joi.array().items(Joi.array().items(Joi.string())).allow(null),
  depth: Joi.number().integer().min(0).allow(null),
  since: Joi.number().integer().min(0).allow(null),
}).unknown(true);

interface EventsRequest {
  channels: string[];
  namespaces?: string[][] | null;
  depth?: number | null;
  since?: number | null;
}

/** The upgrade the server handed to Koa for this request (server.ts), if it is a WebSocket handshake. */
export const UPGRADE_KEY = Symbol.for('graphx.upgrade');

export function registerProtocolRoutes(router: Router, services: RuntimeServices): void {
  const commands = new ProtocolCommands(services);
  const deps = { runEvents: services.runEvents, eventStore: services.eventStore, threads: services.threads };

  /**
   * `threads:read` on the thread; a thread that exists but is hidden from the caller is 404, a missing one waits
   * (`missing`: nothing to read yet).
   */
  const readable = async (ctx: Koa.Context, threadId: string) => {
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    const thread = await services.threads.visibility(threadId, filter);
    if (thread && !thread.visible) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    return { filter, missing: thread === null };
  };

  const streamEvents = async (ctx: Koa.Context, threadId: string, request: EventsRequest) => {
    // Watching before the thread is looked up: when it is missing then, every event it will have comes after the
    // watch began (from a run here, handed over, or from another instance, whose notification says to read).
    const watch = services.runEvents.watchThread(threadId, false);
    try {
      const { filter, missing } = await readable(ctx, threadId);
      const since = request.since ?? undefined;
      if (!missing || since !== undefined) watch.markStale();
      const eventFilter: EventFilter = {
        channels: new Set(request.channels),
        namespaces: request.namespaces ?? undefined,
        depth: request.depth ?? undefined,
      };
      const start = await followStart(deps, threadId, since, missing);
      async function* events(signal: AbortSignal) {
        const wants = (method: string) => methodMayMatch(eventFilter, method);
        for await (const { event, json } of followProtocolEvents(deps, watch, filter, start, signal, wants)) {
          if (!matchesFilter(eventFilter, event)) continue;
          const frame = { id: event.event_id, event: event.method, data: event };
          // The event's wire text, when made as the run wrote it: the frame sends it as it is (http/sse.ts).
          if (json !== undefined) keepWireJson(frame, json);
          yield frame;
        }
      }
      // The follower never ends by itself: the client leaving stops it (no run is cancelled by that).
      respondWithEvents(ctx, `/threads/${threadId}`, events, true, services.metrics.activeStreams);
    } catch (error) {
      watch.close();
      throw error;
    }
    // A stream opened before its thread's first run sends nothing for a while: the client knows it is connected now.
    ctx.res.flushHeaders();
  };

  router.post('/threads/:threadId/stream/events', async (ctx) => {
    const threadId = threadIdInPath(ctx.params);
    await streamEvents(ctx, threadId, validatePart<EventsRequest>(eventsBody, ctx.state.body, 'body'));
  });

  router.get('/threads/:threadId/stream/events', async (ctx) => {
    const threadId = threadIdInPath(ctx.params);
    const upgrade = (ctx.req as unknown as Record<symbol, SocketUpgrade | undefined>)[UPGRADE_KEY];
    if (!upgrade) {
      const channels = String(ctx.query.channels ?? 'values,messages,lifecycle,input')
        .split(',')
        .filter(Boolean);
      await streamEvents(ctx, threadId, validatePart<EventsRequest>(eventsBody, { channels }, 'query'));
      return;
    }
    const { filter } = await readable(ctx, threadId);
    ctx.respond = false;
    openSocketSession(upgrade, {
      deps,
      threadId,
      filter,
      handle: (command) => commands.handle(ctx, userOf(ctx), threadId, command),
    });
  });

  router.post('/threads/:threadId/commands', async (ctx) => {
    const threadId = threadIdInPath(ctx.params);
    const command = asCommand(ctx.state.body);
    if ('type' in command) {
      // A validation error like any other 422 (detail: a list of {loc, msg, type}), with the protocol's own error
      // fields beside it for protocol clients.
      const message = command.type === 'error' ? command.message : 'Not a protocol command.';
      ctx.status = 422;
      ctx.body = { detail: [{ loc: ['body'], msg: message, type: 'invalid_argument' }], ...command };
      return;
    }
    ctx.body = await commands.handle(ctx, userOf(ctx), threadId, command);
  });
}
