/**
 * One protocol-v2 WebSocket on a thread: commands come in as JSON text (`{id, method, params}`), their responses go
 * out, and the thread's events go out once per connection when they match any of its subscriptions
 * (`subscription.subscribe {channels, namespaces?, depth?}` → `{subscription_id, replayed_events}`). The connection
 * follows the thread from the start of its latest run (eventFollower.ts); a subscription first gets that run's events
 * so far (its response comes first, so the client knows the subscription before its events), then live ones, across
 * later runs, until `subscription.unsubscribe` or the socket closes. `agent.getTree` answers from the events read.
 */
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type * as WsModule from 'ws';
import type { WebSocket, WebSocketServer } from 'ws';
import { logger } from '@graphx/kit/logger';
import type { ContainmentFilter } from '../storage/threadStore';
import { asCommand, commandError, type Command, type CommandAnswer } from './commands';
import { followProtocolEvents, followStart, type FollowerDeps } from './eventFollower';
import { AgentTree, isChannel, matchesFilter, type EventFilter, type WireEvent } from './wireEvents';

export interface SocketUpgrade {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
}

// One server object for every handshake: `noServer`, the HTTP server hands each upgrade over (server.ts). Made, and
// `ws` required, by the first handshake: `ws` brings https, tls and zlib along (~1 MB of every instance's heap) for
// the WebSocket transport, which most apps' clients never open.
let sockets: WebSocketServer | null = null;

function socketServer(): WebSocketServer {
  if (!sockets) {
    const { WebSocketServer: Server } = require('ws') as typeof WsModule;
    sockets = new Server({ noServer: true, maxPayload: 1024 * 1024 });
  }
  return sockets;
}

/**
 * Closes every protocol socket as the server stops: 1012 (service restart, what uvicorn sends the Python server's
 * sockets on shutdown) so a client reconnects to another instance; `force` drops those that did not answer. A
 * stopping HTTP server waits for its upgraded sockets, which `closeAllConnections()` does not reach: an open one kept
 * the runtime from exiting at all.
 */
export function closeProtocolSockets(force = false): void {
  for (const ws of sockets?.clients ?? []) {
    if (force) ws.terminate();
    else ws.close(1012, 'server restarting');
  }
}

export function openSocketSession(
  upgrade: SocketUpgrade,
  options: {
    deps: FollowerDeps;
    threadId: string;
    filter: ContainmentFilter;
    handle: (command: Command) => Promise<CommandAnswer>;
  },
): void {
  socketServer().handleUpgrade(upgrade.req, upgrade.socket, upgrade.head, (ws) => {
    new SocketSession(ws, options).start();
  });
}

class SocketSession {
  private readonly subscriptions = new Map<string, EventFilter>();
  /** The latest run's events read so far (what a new subscription replays). */
  private runEvents: WireEvent[] = [];
  private runId: string | null = null;
  private readonly tree: AgentTree;
  private readonly abort = new AbortController();

  constructor(
    private readonly ws: WebSocket,
    private readonly options: Parameters<typeof openSocketSession>[1],
  ) {
    this.tree = new AgentTree('root');
  }

  start(): void {
    this.ws.on('close', () => this.abort.abort());
    this.ws.on('error', () => this.abort.abort());
    this.ws.on(
      'message',
      (data, isBinary) => void this.onMessage(isBinary ? Buffer.from(data as Buffer).toString('utf8') : String(data)),
    );
    void this.follow().catch((error: unknown) => {
      logger.warn({ err: error, threadId: this.options.threadId }, 'protocol socket stopped following its thread');
      this.ws.close(1011, 'event stream failed');
    });
  }

  /** `json`: the message's text when already made (an event's wire text, eventFollower.ts). */
  private send(message: unknown, json?: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(json ?? JSON.stringify(message));
  }

  private async follow(): Promise<void> {
    const { deps, threadId, filter } = this.options;
    const start = await followStart(deps, threadId, undefined);
    // Its first take reads the database from `start`.
    const watch = deps.runEvents.watchThread(threadId);
    for await (const { event, runId, json } of followProtocolEvents(deps, watch, filter, start, this.abort.signal)) {
      if (runId !== this.runId) {
        this.runId = runId;
        this.runEvents = [];
        this.tree.reset();
      }
      this.runEvents.push(event);
      this.tree.note(event);
      if ([...this.subscriptions.values()].some((subscription) => matchesFilter(subscription, event))) this.send(event, json);
    }
  }

  private async onMessage(text: string): Promise<void> {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return this.send(commandError(null, 'invalid_argument', 'Protocol commands must be valid JSON.'));
    }
    const command = asCommand(payload);
    if ('type' in command) return this.send(command);
    try {
      switch (command.method) {
        case 'subscription.subscribe':
          return this.subscribe(command);
        case 'subscription.unsubscribe': {
          const id = command.params?.subscription_id;
          if (typeof id !== 'string' || !this.subscriptions.delete(id)) {
            return this.send(
              commandError(command.id, 'no_such_subscription', `No subscription ${String(id)} on this connection.`),
            );
          }
          return this.send({ type: 'success', id: command.id, result: {} });
        }
        case 'agent.getTree':
          return this.send({ type: 'success', id: command.id, result: { tree: this.tree.tree() } });
        default:
          return this.send(await this.options.handle(command));
      }
    } catch (error) {
      // A refusal of the app's authorization handler (or any other failure) answers this command only.
      const status = (error as { status?: number }).status;
      const code = status === 403 || status === 401 ? 'permission_denied' : status === 404 ? 'no_such_run' : 'unknown_error';
      this.send(commandError(command.id, code, (error as Error).message));
    }
  }

  private subscribe(command: Command): void {
    const params = command.params ?? {};
    const channels = params.channels;
    if (!Array.isArray(channels) || channels.length === 0 || !channels.every(isChannel)) {
      return this.send(
        commandError(
          command.id,
          'invalid_argument',
          'subscription.subscribe requires a non-empty channels array of protocol channels.',
        ),
      );
    }
    const namespaces =
      Array.isArray(params.namespaces) &&
      params.namespaces.every((ns) => Array.isArray(ns) && ns.every((s) => typeof s === 'string'))
        ? (params.namespaces as string[][])
        : undefined;
    const depth = Number.isInteger(params.depth) && (params.depth as number) >= 0 ? (params.depth as number) : undefined;
    const subscription: EventFilter = { channels: new Set(channels as string[]), namespaces, depth };
    const id = crypto.randomUUID();
    const replay = this.runEvents.filter((event) => matchesFilter(subscription, event));
    // Synchronously, between two events of the follower: the response, the replay, then the subscription is live.
    this.send({ type: 'success', id: command.id, result: { subscription_id: id, replayed_events: replay.length } });
    // An event another subscription already delivered on this connection is not sent twice.
    const delivered = (event: WireEvent) => [...this.subscriptions.values()].some((other) => matchesFilter(other, event));
    for (const event of replay) if (!delivered(event)) this.send(event);
    this.subscriptions.set(id, subscription);
  }
}
