/**
 * graphx.json `http.app` naming a Python ASGI app (Starlette, FastAPI): the app runs in the executor, and this
 * middleware, where a JavaScript custom app sits (after auth, before the API's routes), hands it each request as one
 * streaming RPC call. The executor answers "not mine" (no route of the app matches) or the response's start, then its
 * body chunk by chunk as the app sends them: a StreamingResponse reaches the client as it goes, not buffered. A client
 * that goes away cancels the app's handler.
 */
import { Readable } from 'node:stream';
import type Koa from 'koa';
import type { ModuleExportRef } from '../appConfig';
import type { PythonExecutor } from './executor';

type Answer = { pass: true; partial?: boolean } | { status: number; headers: Array<[string, string]> } | { body: string };

/** Loads the app (and starts its lifespan) in the executor. @throws the executor's error when it does not load. */
export async function pythonAppMiddleware(
  executor: PythonExecutor,
  ref: ModuleExportRef,
  appDir: string,
): Promise<Koa.Middleware> {
  await executor.call('load_http_app', { app_dir: appDir, app: ref });
  return async (ctx, next) => {
    const first = await ask(executor, ctx, false);
    if (first) return respond(ctx, first);
    if (ctx.state.bodyError) throw ctx.state.bodyError;
    await next();
    // Nothing of the API answered a path one of the app's routes has for another method: as under the Python server
    // (the app's routes and the API's in one router), the app's route answers (its 405).
    if (ctx.state.partialRoute && ctx.status === 404 && ctx.body == null) {
      const forced = await ask(executor, ctx, true);
      if (forced) respond(ctx, forced);
    }
  };
}

interface Started {
  start: { status: number; headers: Array<[string, string]> };
  answers: AsyncGenerator<Answer>;
}

/** Asks the app: its response's start and the rest to come, or null when it leaves the request to the API. */
async function ask(executor: PythonExecutor, ctx: Koa.Context, force: boolean): Promise<Started | null> {
  const raw = ctx.state.rawBody as string | undefined;
  const headers: Array<[string, string]> = [];
  for (let index = 0; index < ctx.req.rawHeaders.length; index += 2) {
    headers.push([ctx.req.rawHeaders[index]!, ctx.req.rawHeaders[index + 1]!]);
  }
  const gone = new AbortController();
  const onClose = () => gone.abort();
  ctx.res.once('close', onClose);
  const answers = executor.stream(
    'http_request',
    {
      method: ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      headers,
      body: ctx.method === 'GET' || ctx.method === 'HEAD' ? null : (raw ?? null),
      scheme: ctx.protocol,
      client: ctx.ip || null,
      force,
    },
    gone.signal,
  ) as AsyncGenerator<Answer>;
  const first = await answers.next();
  if (!first.done && 'status' in first.value) return { start: first.value, answers };
  ctx.res.off('close', onClose);
  for await (const rest of answers) void rest; // the executor's answer follows at once
  if (first.done) throw new Error('http.app ended without answering');
  if ('pass' in first.value && first.value.partial) ctx.state.partialRoute = true;
  return null;
}

function respond(ctx: Koa.Context, { start, answers }: Started): void {
  ctx.status = start.status;
  const grouped = new Map<string, string[]>();
  for (const [name, value] of start.headers) grouped.set(name.toLowerCase(), [...(grouped.get(name.toLowerCase()) ?? []), value]);
  for (const [name, values] of grouped) {
    // Koa sets the length of what it sends; a streamed body goes chunked.
    if (name === 'content-length') continue;
    ctx.set(name, values.length === 1 ? values[0]! : values);
  }
  ctx.body = Readable.from(bodyChunks(answers), { objectMode: false });
  // Koa's body setter gives a stream without a type one; the app's choice (none) stands.
  if (!grouped.has('content-type')) ctx.remove('Content-Type');
}

async function* bodyChunks(answers: AsyncGenerator<Answer>): AsyncGenerator<Buffer> {
  for await (const answer of answers) {
    if ('body' in answer) yield Buffer.from(answer.body, 'base64');
  }
}
