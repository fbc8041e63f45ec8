/**
 * Crons: create (stateless or on a thread), get, patch, delete, search, count. Each route asks the app's `crons`
 * handler for the caller's filter (a cron outside it is 404); a thread cron also needs the thread to be visible.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { NotFoundError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import { CronService, type CronBody } from '../../execution/cronService';
import type { Cron, CronPage, CronQuery } from '../../storage/cronStore';
import { cronCountBody, cronCreateBody, cronIdParams, cronPatchBody, cronSearchBody, threadIdInPath } from '../schemas';
import { filterFor, userOf, type RuntimeServices } from './context';

const cronIdOf = (ctx: Koa.Context) => validatePart<{ cronId: string }>(cronIdParams, ctx.params, 'path').cronId;
const cronNotFound = (cronId: string) => new NotFoundError(`Cron ${cronId} not found.`);

function selected(cron: Cron, select: string[] | undefined): Partial<Cron> {
  if (!select || select.length === 0) return cron;
  return Object.fromEntries(Object.entries(cron).filter(([key]) => select.includes(key)));
}

export function registerCronRoutes(router: Router, services: RuntimeServices): void {
  const crons = new CronService({ crons: services.crons, assistants: services.assistants });

  const create = async (ctx: Koa.Context) => {
    const threadId = ctx.params.threadId ? threadIdInPath(ctx.params) : null;
    const body = validatePart<CronBody & { assistant_id: string; schedule: string }>(cronCreateBody, ctx.state.body, 'body');
    if (threadId) {
      const threadFilter = await filterFor(services, ctx, 'threads', 'read', { thread_id: threadId });
      if (!(await services.threads.get(threadId, threadFilter))) throw new NotFoundError(`Thread with ID ${threadId} not found.`);
    }
    const user = userOf(ctx);
    const draft = await crons.draft(user, threadId, body);
    // The handler sees the cron as it will be stored and may stamp its metadata (e.g. an owner).
    const value = { ...draft } as Record<string, unknown>;
    await filterFor(services, ctx, 'crons', 'create', value);
    ctx.body = await crons.create({ ...draft, metadata: (value.metadata as Record<string, unknown>) ?? draft.metadata }, user);
  };
  router.post('/runs/crons', create);
  router.post('/threads/:threadId/runs/crons', create);

  router.post('/runs/crons/search', async (ctx) => {
    const body = validatePart<CronPage & { select?: string[] }>(cronSearchBody, ctx.state.body, 'body');
    const filter = await filterFor(services, ctx, 'crons', 'search', { ...body });
    const query = { ...body, assistant_id: body.assistant_id && (await crons.assistantIdOf(body.assistant_id, userOf(ctx))) };
    ctx.body = (await services.crons.search(query, filter)).map((cron) => selected(cron, body.select));
  });

  router.post('/runs/crons/count', async (ctx) => {
    const body = validatePart<CronQuery>(cronCountBody, ctx.state.body, 'body');
    const filter = await filterFor(services, ctx, 'crons', 'search', { ...body });
    const query = { ...body, assistant_id: body.assistant_id && (await crons.assistantIdOf(body.assistant_id, userOf(ctx))) };
    ctx.body = await services.crons.count(query, filter);
  });

  router.get('/runs/crons/:cronId', async (ctx) => {
    const cronId = cronIdOf(ctx);
    const filter = await filterFor(services, ctx, 'crons', 'read', { cron_id: cronId });
    ctx.body = (await services.crons.get(cronId, filter)) ?? throwError(cronNotFound(cronId));
  });

  router.patch('/runs/crons/:cronId', async (ctx) => {
    const cronId = cronIdOf(ctx);
    const body = validatePart<CronBody>(cronPatchBody, ctx.state.body, 'body');
    const filter = await filterFor(services, ctx, 'crons', 'update', { cron_id: cronId, ...body });
    ctx.body = await crons.patch(cronId, body, filter, userOf(ctx));
  });

  router.delete('/runs/crons/:cronId', async (ctx) => {
    const cronId = cronIdOf(ctx);
    const filter = await filterFor(services, ctx, 'crons', 'delete', { cron_id: cronId });
    if (!(await services.crons.delete(cronId, filter))) throw cronNotFound(cronId);
    ctx.status = 204;
  });
}

function throwError(error: Error): never {
  throw error;
}
