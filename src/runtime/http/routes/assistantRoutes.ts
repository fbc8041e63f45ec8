/** System assistants: one per graph of graphx.json, read-only. */
import type Router from '@koa/router';
import { validatePart } from '../../../http/validation';
import { NotFoundError } from '../../../errors';
import { contains } from '../../auth/authorization';
import { assistantIdParams, assistantSearchBody } from '../schemas';
import { filterFor, type RuntimeServices } from './context';

export function registerAssistantRoutes(router: Router, services: RuntimeServices): void {
  router.post('/assistants/search', async (ctx) => {
    const body = validatePart<{ graph_id?: string; metadata?: Record<string, unknown>; limit: number; offset: number }>(
      assistantSearchBody,
      ctx.state.body,
      'body',
    );
    const filter = await filterFor(services, ctx, 'assistants', 'search', { ...body });
    const matching = services.graphs.graphs
      .map((graph) => graph.assistant)
      .filter((assistant) => !body.graph_id || assistant.graph_id === body.graph_id)
      .filter((assistant) => contains(assistant.metadata, body.metadata ?? {}) && contains(assistant.metadata, filter));
    ctx.set('X-Pagination-Total', String(matching.length));
    ctx.body = matching.slice(body.offset, body.offset + body.limit);
  });

  router.get('/assistants/:assistantId', async (ctx) => {
    const { assistantId } = validatePart<{ assistantId: string }>(assistantIdParams, ctx.params, 'path');
    const filter = await filterFor(services, ctx, 'assistants', 'read', { assistant_id: assistantId });
    const assistant = services.graphs.find(assistantId)?.assistant;
    if (!assistant || !contains(assistant.metadata, filter)) throw new NotFoundError(`Assistant ${assistantId} not found.`);
    ctx.body = assistant;
  });
}
