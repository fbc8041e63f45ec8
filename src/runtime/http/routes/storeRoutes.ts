/**
 * The long-term store (`/store/*`), the same PostgresStore the graphs get as `config.store`, in the deployment's
 * database. Authorization events are the anchor's `store:put|get|delete|search|list_namespaces`; a filter is matched
 * against the item's value with its `namespace` and `key`, and an item outside it behaves as missing.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import type { BaseStore, Item } from '@langchain/langgraph-checkpoint';
import { validatePart } from '../../../http/validation';
import { NotFoundError } from '../../../errors';
import { authorize, contains, type AuthFilter } from '../../auth/authorization';
import { toWireJson } from '../../execution/serialize';
import { storeDeleteBody, storeItemQuery, storeNamespacesBody, storePutBody, storeSearchBody } from '../schemas';
import { userOf, type RuntimeServices } from './context';

function toApiItem(item: Item): Record<string, unknown> {
  const { createdAt, updatedAt, ...rest } = item;
  return { ...rest, created_at: createdAt, updated_at: updatedAt };
}

const visible = (item: Pick<Item, 'namespace' | 'key' | 'value'>, filter: AuthFilter) =>
  contains({ ...item.value, namespace: item.namespace, key: item.key }, filter);

export function registerStoreRoutes(router: Router, services: RuntimeServices, store: BaseStore): void {
  const filterFor = async (ctx: Koa.Context, action: string, value: Record<string, unknown>) => {
    const user = userOf(ctx);
    if (!user) return {};
    return authorize(services.customAuth?.['~handlerCache'].callbacks, user, 'store', action, value);
  };

  router.put('/store/items', async (ctx) => {
    const body = validatePart<{
      namespace: string[];
      key: string;
      value: Record<string, unknown>;
      index?: false | string[] | null;
      ttl?: number | null;
    }>(storePutBody, ctx.state.body, 'body');
    const filter = await filterFor(ctx, 'put', { ...body });
    if (Object.keys(filter).length > 0) {
      const existing = await store.get(body.namespace, body.key);
      if (existing && !visible(existing, filter)) throw new NotFoundError('Item not found.');
    }
    await (store.put as (...args: unknown[]) => Promise<void>)(body.namespace, body.key, body.value, body.index ?? undefined, {
      ttl: body.ttl ?? undefined,
    });
    ctx.status = 204;
  });

  router.get('/store/items', async (ctx) => {
    const query = validatePart<{ namespace: string[]; key: string }>(storeItemQuery, { ...ctx.query }, 'query');
    const filter = await filterFor(ctx, 'get', { namespace: query.namespace, key: query.key });
    const item = await store.get(query.namespace, query.key);
    // A missing item is `null` (as the anchor answers); one outside the caller's filter is 404.
    if (item && !visible(item, filter)) throw new NotFoundError('Item not found.');
    ctx.type = 'application/json';
    ctx.body = item ? toWireJson(toApiItem(item)) : 'null';
  });

  router.delete('/store/items', async (ctx) => {
    const body = validatePart<{ namespace: string[]; key: string }>(storeDeleteBody, ctx.state.body, 'body');
    const filter = await filterFor(ctx, 'delete', { ...body });
    const item = await store.get(body.namespace, body.key);
    if (item && !visible(item, filter)) throw new NotFoundError('Item not found.');
    await store.delete(body.namespace, body.key);
    ctx.status = 204;
  });

  router.post('/store/items/search', async (ctx) => {
    const body = validatePart<{
      namespace_prefix: string[];
      filter?: Record<string, unknown> | null;
      limit: number;
      offset: number;
      query?: string | null;
    }>(storeSearchBody, ctx.state.body, 'body');
    const filter = await filterFor(ctx, 'search', { namespace: body.namespace_prefix, ...body });
    const authFiltered = Object.keys(filter).length > 0;
    const items = await store.search(body.namespace_prefix, {
      filter: body.filter ?? undefined,
      // With an authorization filter the page is cut after filtering (bounded scan).
      limit: authFiltered ? 1000 : body.limit,
      offset: authFiltered ? 0 : body.offset,
      query: body.query || undefined,
    });
    const page = authFiltered
      ? items.filter((item) => visible(item, filter)).slice(body.offset, body.offset + body.limit)
      : items;
    ctx.type = 'application/json';
    ctx.body = toWireJson({ items: page.map(toApiItem) });
  });

  router.post('/store/namespaces', async (ctx) => {
    const body = validatePart<{
      prefix?: string[] | null;
      suffix?: string[] | null;
      max_depth?: number | null;
      limit: number;
      offset: number;
    }>(storeNamespacesBody, ctx.state.body, 'body');
    const filter = await filterFor(ctx, 'list_namespaces', { namespace: body.prefix, ...body });
    const namespaces = await store.listNamespaces({
      prefix: body.prefix ?? undefined,
      suffix: body.suffix ?? undefined,
      maxDepth: body.max_depth ?? undefined,
      limit: body.limit,
      offset: body.offset,
    });
    ctx.body = {
      namespaces: namespaces.filter((namespace) => contains({ namespace }, { namespace: filter.namespace ?? namespace })),
    };
  });
}
