/**
 * A2A (Agent2Agent, JSON-RPC 2.0) on each assistant, as the Python server offers it: `POST /a2a/{assistant_id}` with
 * `message/send` (runs the assistant's graph on the task's context and answers the task), `message/stream` (the same
 * as SSE of JSON-RPC envelopes: the task working, then its artifact and final status), `tasks/get`; `tasks/cancel` is
 * not supported. The context is the thread (`contextId` = `thread_id`, created when new); a task is a run. A text part
 * becomes a user message (`{messages: [...]}`), a data part the input itself; an interrupted thread is resumed by the
 * next message (the task is `input-required` meanwhile). The agent card is at `/a2a/{assistant_id}/.well-known/
 * agent-card.json`. Every call dispatches `assistants:read`, then a run is a run (`threads:create_run`) and a read a
 * read (`threads:read`).
 */
import crypto from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import { DomainError, ForbiddenError, NotFoundError, UnauthorizedError } from '@graphx/kit/errors';
import type { RunRequest } from '../../execution/runService';
import { executeHere, prepareOrQueue } from '../../execution/streamedRuns';
import { toWireJson } from '../../execution/serialize';
import { respondWithEvents } from '../sse';
import { filterFor, userOf, type RuntimeServices } from './context';

type JsonRpcId = string | number | null;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const rpcError = (id: JsonRpcId, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
const rpcResult = (id: JsonRpcId, result: unknown) => ({ jsonrpc: '2.0', id, result });

interface A2aPart {
  kind?: string;
  type?: string;
  text?: string;
  data?: unknown;
}

/** The graph input (or resume value) of an A2A message's parts. */
function inputOf(parts: A2aPart[]): { text: string | null; data: unknown } {
  const texts = parts
    .filter((part) => (part.kind ?? part.type) === 'text' && typeof part.text === 'string')
    .map((part) => part.text);
  const data = parts.find((part) => (part.kind ?? part.type) === 'data')?.data;
  return { text: texts.length > 0 ? texts.join('\n') : null, data };
}

/** The text of the last AI message of `values`, if any. */
function answerText(values: unknown): string | null {
  const messages = isRecord(values) && Array.isArray(values.messages) ? values.messages : [];
  const last = [...messages]
    .reverse()
    .find((message) => isRecord(message) && ['ai', 'AIMessage', 'assistant'].includes(String(message.type ?? message.role)));
  if (!last) return null;
  const content = (last as Record<string, unknown>).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((block) => (isRecord(block) && typeof block.text === 'string' ? block.text : '')).join('');
  return null;
}

export function registerA2aRoutes(router: Router, services: RuntimeServices): void {
  const state = (status: string, interrupted: boolean) =>
    status === 'pending' || status === 'running'
      ? 'working'
      : status === 'error'
        ? 'failed'
        : interrupted
          ? 'input-required'
          : status === 'success'
            ? 'completed'
            : 'canceled';

  /** The task a run is, read back from its thread. */
  const taskOf = async (ctx: Koa.Context, runId: string, threadId: string) => {
    const filter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
    const [run, thread] = await Promise.all([
      services.runQueue.get(runId, threadId, filter),
      services.threads.get(threadId, filter),
    ]);
    if (!run || !thread) return null;
    const latest = (await services.runs.listForThread(threadId, 1, 0, null))[0]?.run_id === runId;
    const interrupted = latest && thread.status === 'interrupted';
    const values = latest ? thread.values : null;
    const text = answerText(values);
    const status = { state: state(run.status, interrupted), timestamp: run.updated_at };
    const parts = text !== null ? [{ kind: 'text', text }] : values !== null ? [{ kind: 'data', data: values }] : [];
    return {
      kind: 'task',
      id: runId,
      contextId: threadId,
      status: interrupted
        ? {
            ...status,
            message: {
              kind: 'message',
              role: 'agent',
              messageId: crypto.randomUUID(),
              parts: [{ kind: 'data', data: thread.interrupts }],
            },
          }
        : status,
      artifacts: parts.length > 0 && !interrupted ? [{ artifactId: `${runId}-result`, name: 'result', parts }] : [],
    };
  };

  /** Starts the run a message asks for; resolves with its run id once it has ended (or been queued and ended). */
  const runMessage = async (ctx: Koa.Context, assistantId: string, params: Record<string, unknown>) => {
    const message = params.message;
    if (!isRecord(message) || !Array.isArray(message.parts) || message.parts.length === 0) {
      throw new DomainError('params.message with parts is required.');
    }
    const { text, data } = inputOf(message.parts as A2aPart[]);
    if (text === null && data === undefined) throw new DomainError('Only text and data parts are supported.');
    const threadId = typeof message.contextId === 'string' ? message.contextId : crypto.randomUUID();
    if (!/^[0-9a-f-]{36}$/i.test(threadId)) throw new DomainError('contextId must be a UUID (it is the thread id).');
    const existing = await services.threads.get(threadId, {});
    const value = data !== undefined ? data : text;
    const request: RunRequest = {
      assistant_id: assistantId,
      ...(existing?.status === 'interrupted'
        ? { command: { resume: value } }
        : { input: data !== undefined ? data : { messages: [{ role: 'user', content: text }] } }),
      metadata: isRecord(params.metadata) ? params.metadata : undefined,
      stream_mode: ['values'],
      on_disconnect: 'continue',
      if_not_exists: 'create',
    };
    const { prepared, queued } = await prepareOrQueue(services, userOf(ctx), threadId, request, false);
    if (prepared) for await (const _event of executeHere(services, prepared, new AbortController().signal));
    const runId = (prepared?.run ?? queued!).run_id;
    if (queued) {
      for (;;) {
        const run = await services.runQueue.get(runId, threadId);
        if (!run || !['pending', 'running'].includes(run.status)) break;
        await services.runEvents.waitForNews(runId, 1_000, new AbortController().signal);
      }
    }
    return { runId, threadId };
  };

  router.get('/a2a/:assistantId/.well-known/agent-card.json', async (ctx) => {
    const assistantId = ctx.params.assistantId!;
    await filterFor(services, ctx, 'assistants', 'read', { assistant_id: assistantId });
    const { graph, assistant } = await services.assistants.forRun(assistantId, userOf(ctx));
    ctx.body = {
      protocolVersion: '0.3.0',
      name: assistant.name ?? graph.spec.graphId,
      description: graph.spec.description ?? `The ${graph.spec.graphId} graph`,
      url: `${ctx.protocol}://${ctx.host}${ctx.get('x-forwarded-prefix') || ''}/a2a/${assistantId}`,
      preferredTransport: 'JSONRPC',
      version: '0.1.0',
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [{ id: graph.spec.graphId, name: graph.spec.graphId, description: graph.spec.description ?? '', tags: [] }],
    };
  });

  /** `message/stream`: a working status at once, then the task's artifacts and its final status as SSE. */
  const streamMessage = (ctx: Koa.Context, assistantId: string, id: JsonRpcId, params: Record<string, unknown>) => {
    const message = params.message;
    const contextId = isRecord(message) && typeof message.contextId === 'string' ? message.contextId : crypto.randomUUID();
    const withContext = { ...params, message: { ...(isRecord(message) ? message : {}), contextId } };
    const started = runMessage(ctx, assistantId, withContext);
    respondWithEvents(
      ctx,
      `/a2a/${assistantId}`,
      async function* () {
        const working = { kind: 'status-update', taskId: null, contextId, status: { state: 'working' }, final: false };
        yield { event: 'message', data: rpcResult(id, working) };
        try {
          const { runId, threadId } = await started;
          const task = await taskOf(ctx, runId, threadId);
          for (const artifact of task?.artifacts ?? []) {
            yield {
              event: 'message',
              data: rpcResult(id, { kind: 'artifact-update', taskId: runId, contextId, artifact, lastChunk: true }),
            };
          }
          yield {
            event: 'message',
            data: rpcResult(id, { kind: 'status-update', taskId: runId, contextId, status: task?.status, final: true }),
          };
        } catch (error) {
          yield { event: 'message', data: rpcError(id, -32603, (error as Error).message) };
        }
      },
      // Leaving stops only the stream: the task runs on (its run was started without the request's signal).
      true,
    );
  };

  router.post('/a2a/:assistantId', async (ctx) => {
    const assistantId = ctx.params.assistantId!;
    const body = ctx.state.body as Record<string, unknown> | undefined;
    const id = (isRecord(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null) as JsonRpcId;
    if (!isRecord(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') {
      ctx.body = rpcError(id, -32600, 'Not a JSON-RPC 2.0 request.');
      return;
    }
    await filterFor(services, ctx, 'assistants', 'read', { assistant_id: assistantId });
    await services.assistants.forRun(assistantId, userOf(ctx));
    const params = isRecord(body.params) ? body.params : {};
    try {
      if (body.method === 'message/send') {
        const { runId, threadId } = await runMessage(ctx, assistantId, params);
        ctx.body = rpcResult(id, await taskOf(ctx, runId, threadId));
      } else if (body.method === 'message/stream') {
        streamMessage(ctx, assistantId, id, params);
      } else if (body.method === 'tasks/get') {
        const taskId = typeof params.id === 'string' ? params.id : '';
        const threadId = taskId ? await services.runs.threadOf(taskId) : null;
        const task = threadId ? await taskOf(ctx, taskId, threadId) : null;
        ctx.body = task ? rpcResult(id, task) : rpcError(id, -32001, `Task ${taskId} not found.`);
      } else if (body.method === 'tasks/cancel') {
        ctx.body = rpcError(id, -32004, 'tasks/cancel is not supported; cancel the run through the runs API.');
      } else {
        ctx.body = rpcError(id, -32601, `Method ${body.method} not found.`);
      }
    } catch (error) {
      if (error instanceof ForbiddenError || error instanceof UnauthorizedError || error instanceof NotFoundError) throw error;
      if (error instanceof DomainError) {
        ctx.body = rpcError(id, -32602, error.message);
        return;
      }
      throw error;
    }
    if (ctx.body !== undefined) ctx.body = JSON.parse(toWireJson(ctx.body));
  });
}
