/**
 * Protocol-v2 commands on a thread (`POST /threads/{id}/commands`, and the same over the WebSocket): `run.start`,
 * `input.respond`, `state.get`, `state.listCheckpoints`, `agent.getTree`. A run is authorized like any run
 * (`threads:create_run`, through RunService), reads like any read (`threads:read`); a refusal of the app's handler is
 * the HTTP answer (403, or the handler's own status), as on every other route. Everything else a command can get
 * wrong is a protocol error response with the protocol's codes (`invalid_argument`, `unknown_command`,
 * `no_such_run`, `no_such_interrupt`, `not_supported`, `unknown_error`).
 */
import { DomainError, ForbiddenError, NotFoundError, UnauthorizedError } from '@graphx/kit/errors';
import { logger } from '@graphx/kit/logger';
import type { AuthUser } from '../auth/authUser';
import { protocolState } from '../execution/protocolFrames';
import type { RunRequest } from '../execution/runService';
import { executeHere, prepareOrQueue } from '../execution/streamedRuns';
import { DEFAULT_MULTITASK_STRATEGY, type MultitaskStrategy } from '../execution/threadClaim';
import { filterFor, type RuntimeServices } from '../http/routes/context';
import type Koa from 'koa';
import { AgentTree, wireEventOf } from './wireEvents';

export interface Command {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

export type CommandAnswer =
  | { type: 'success'; id: number; result: Record<string, unknown>; meta?: Record<string, unknown> }
  | { type: 'error'; id: number | null; error: string; message: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const commandError = (id: number | null, error: string, message: string): CommandAnswer => ({
  type: 'error',
  id,
  error,
  message,
});

/** The command in `payload`, or the protocol's answer to a payload that is none. */
export function asCommand(payload: unknown): Command | CommandAnswer {
  if (!isRecord(payload) || !Number.isInteger(payload.id) || (payload.id as number) < 0 || typeof payload.method !== 'string') {
    return commandError(null, 'invalid_argument', 'Protocol commands must include an integer id and string method.');
  }
  if (payload.params !== undefined && !isRecord(payload.params)) {
    return commandError(payload.id as number, 'invalid_argument', 'Protocol command params must be an object.');
  }
  return payload as unknown as Command;
}

const STRATEGIES = new Set(['reject', 'rollback', 'interrupt', 'enqueue']);
/** How long `input.respond` waits for a busy thread's run to end (see there) before answering no_such_run. */
const RELEASE_WAIT_MS = 2_000;

export class ProtocolCommands {
  constructor(private readonly services: RuntimeServices) {}

  /** Answers `command` on `threadId` for the request's user. Authorization refusals throw (the HTTP answer). */
  async handle(ctx: Koa.Context, user: AuthUser | null, threadId: string, command: Command): Promise<CommandAnswer> {
    const params = command.params ?? {};
    try {
      switch (command.method) {
        case 'run.start':
          return await this.runStart(user, threadId, command.id, params);
        case 'input.respond':
          return await this.inputRespond(ctx, user, threadId, command.id, params);
        case 'state.get':
          return await this.stateGet(ctx, threadId, command.id, params);
        case 'state.listCheckpoints':
          return await this.listCheckpoints(ctx, threadId, command.id, params);
        case 'agent.getTree':
          return await this.agentTree(ctx, threadId, command.id);
        case 'subscription.subscribe':
        case 'subscription.unsubscribe':
        case 'subscription.reconnect':
        case 'state.fork':
          return commandError(
            command.id,
            'not_supported',
            command.method.startsWith('subscription.')
              ? `${command.method} is a WebSocket command; over HTTP each POST /threads/{id}/stream/events is a subscription.`
              : 'state.fork is not supported: start a run with config.configurable.checkpoint_id instead.',
          );
        default:
          return commandError(command.id, 'unknown_command', `Unknown protocol command: ${command.method}`);
      }
    } catch (error) {
      // A refusal, or a thread or assistant the caller cannot see: the HTTP answer, as on every other route.
      if (error instanceof ForbiddenError || error instanceof UnauthorizedError || error instanceof NotFoundError) throw error;
      if ((error as { status?: unknown }).status !== undefined && !(error instanceof DomainError)) throw error;
      if (error instanceof DomainError) return commandError(command.id, 'invalid_argument', error.message);
      logger.error({ err: error, method: command.method }, 'protocol command failed');
      return commandError(command.id, 'unknown_error', 'The command failed; see the server log.');
    }
  }

  private success(id: number, threadId: string, result: Record<string, unknown>): CommandAnswer {
    return { type: 'success', id, result, meta: { thread_id: threadId } };
  }

  /** Starts a run on the thread (creating it when missing); on an interrupted thread the input resumes it. */
  private async runStart(user: AuthUser | null, threadId: string, id: number, params: Record<string, unknown>) {
    if (typeof params.assistant_id !== 'string' || params.assistant_id === '') {
      return commandError(id, 'invalid_argument', 'run.start requires an assistant_id.');
    }
    const thread = await this.services.threads.visibility(threadId, {});
    const resume = params.input !== undefined && params.input !== null && thread?.status === 'interrupted';
    const runId = await this.start(
      user,
      threadId,
      params,
      resume ? { command: { resume: params.input } } : { input: params.input ?? null },
      thread === null,
    );
    return this.success(id, threadId, { run_id: runId });
  }

  /** Resumes the thread's pending interrupts named by id (`{interrupt_id, response}` or `{responses: [...]}`). */
  private async inputRespond(
    ctx: Koa.Context,
    user: AuthUser | null,
    threadId: string,
    id: number,
    params: Record<string, unknown>,
  ) {
    const entries = Array.isArray(params.responses)
      ? params.responses
      : typeof params.interrupt_id === 'string'
        ? [{ interrupt_id: params.interrupt_id, response: params.response }]
        : null;
    if (
      !entries ||
      entries.length === 0 ||
      !entries.every((entry) => isRecord(entry) && typeof entry.interrupt_id === 'string')
    ) {
      return commandError(id, 'invalid_argument', 'input.respond requires an interrupt_id (or responses with one each).');
    }
    const filter = await filterFor(this.services, ctx, 'threads', 'read', { thread_id: threadId });
    let thread = await this.services.threads.get(threadId, filter);
    if (thread?.status === 'busy') {
      // A run's last event (lifecycle `interrupted`) is sent before its thread is released as interrupted: a client
      // that answers at once waits for the release (announced to every instance) instead of hearing no_such_run.
      const released = this.services.coordinator.waitForRelease(threadId, RELEASE_WAIT_MS);
      thread = await this.services.threads.get(threadId, filter);
      if (thread?.status === 'busy') {
        await released;
        thread = await this.services.threads.get(threadId, filter);
      }
    }
    if (!thread) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    if (thread.status !== 'interrupted') {
      return commandError(id, 'no_such_run', 'No interrupted run is bound to this thread.');
    }
    const pending = new Set(
      Object.values(thread.interrupts ?? {})
        .flat()
        .map((item) => (item as { id?: string }).id),
    );
    const resume: Record<string, unknown> = {};
    for (const entry of entries as Array<{ interrupt_id: string; response: unknown }>) {
      if (!pending.has(entry.interrupt_id))
        return commandError(id, 'no_such_interrupt', `No pending interrupt ${entry.interrupt_id}.`);
      resume[entry.interrupt_id] = entry.response;
    }
    const command = {
      resume,
      ...(params.update !== undefined ? { update: params.update } : {}),
      ...(params.goto !== undefined ? { goto: params.goto } : {}),
    };
    const assistantId = String(thread.metadata.assistant_id ?? thread.metadata.graph_id ?? '');
    const runId = await this.start(user, threadId, { ...params, assistant_id: assistantId }, { command });
    return this.success(id, threadId, { run_id: runId });
  }

  /** `threadMissing`: the thread did not exist a moment ago (see prepareOrQueue). */
  private async start(
    user: AuthUser | null,
    threadId: string,
    params: Record<string, unknown>,
    what: Partial<RunRequest>,
    threadMissing = false,
  ) {
    const asked = params.multitaskStrategy ?? params.multitask_strategy;
    const request: RunRequest = {
      assistant_id: params.assistant_id as string,
      ...what,
      config: isRecord(params.config) ? (params.config as RunRequest['config']) : undefined,
      metadata: isRecord(params.metadata) ? params.metadata : undefined,
      stream_mode: ['values'],
      stream_subgraphs: true,
      stream_resumable: true,
      on_disconnect: 'continue',
      multitask_strategy: STRATEGIES.has(asked as string) ? (asked as MultitaskStrategy) : DEFAULT_MULTITASK_STRATEGY,
      if_not_exists: 'create',
      protocol: true,
    };
    const { prepared, queued } = await prepareOrQueue(this.services, user, threadId, request, false, threadMissing);
    if (prepared) {
      // Nobody's connection holds the run: it goes on whoever watches (on_disconnect continue).
      void (async () => {
        for await (const _event of executeHere(this.services, prepared, new AbortController().signal));
      })().catch((error: unknown) => logger.error({ err: error, runId: prepared.run.run_id }, 'protocol run failed'));
      return prepared.run.run_id;
    }
    return queued!.run_id;
  }

  private async stateGet(ctx: Koa.Context, threadId: string, id: number, params: Record<string, unknown>) {
    const filter = await filterFor(this.services, ctx, 'threads', 'read', { thread_id: threadId });
    const state = JSON.parse(await this.services.threadState.get(threadId, filter)) as {
      values: Record<string, unknown>;
      checkpoint?: { checkpoint_id?: string; checkpoint_ns?: string } | null;
    };
    const keys = Array.isArray(params.keys) ? (params.keys as unknown[]).filter((key) => typeof key === 'string') : null;
    const values = protocolState(state.values ?? {}) as Record<string, unknown>;
    const result: Record<string, unknown> = {
      values: keys ? Object.fromEntries(Object.entries(values).filter(([key]) => keys.includes(key))) : values,
    };
    if (state.checkpoint?.checkpoint_id)
      result.checkpoint = { id: state.checkpoint.checkpoint_id, ns: state.checkpoint.checkpoint_ns ?? '' };
    return this.success(id, threadId, result);
  }

  private async listCheckpoints(ctx: Koa.Context, threadId: string, id: number, params: Record<string, unknown>) {
    const filter = await filterFor(this.services, ctx, 'threads', 'read', { thread_id: threadId });
    const limit = Number.isInteger(params.limit) ? Math.min(Math.max(params.limit as number, 1), 1000) : 10;
    const before = typeof params.before === 'string' ? params.before : undefined;
    const states = JSON.parse(await this.services.threadState.history(threadId, filter, { limit, before })) as Array<{
      checkpoint: { checkpoint_id: string };
      created_at: string;
      metadata: { step?: number; source?: string; writes?: Record<string, unknown> | null } & Record<string, unknown>;
    }>;
    const checkpoints = states.map((state) => ({
      id: state.checkpoint.checkpoint_id,
      timestamp: state.created_at,
      step: state.metadata?.step ?? -1,
      ...(state.metadata?.writes ? { node_name: Object.keys(state.metadata.writes)[0] } : {}),
      metadata: state.metadata,
    }));
    return this.success(id, threadId, { checkpoints });
  }

  /** The tree of the thread's latest run, from its kept events. */
  private async agentTree(ctx: Koa.Context, threadId: string, id: number) {
    const filter = await filterFor(this.services, ctx, 'threads', 'read', { thread_id: threadId });
    const thread = await this.services.threads.get(threadId, filter);
    if (!thread) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    const tree = new AgentTree(String(thread.metadata.graph_id ?? 'root'));
    let cursor = '0';
    let runId: string | null = null;
    for (;;) {
      const rows = await this.services.eventStore.forThread(threadId, cursor);
      if (rows.length === 0) break;
      for (const row of rows) {
        cursor = row.id;
        const event = wireEventOf(row);
        if (!event) continue;
        if (row.runId !== runId) tree.reset();
        runId = row.runId;
        tree.note(event);
      }
    }
    return this.success(id, threadId, { tree: tree.tree() });
  }
}
