/**
 * The long-term store (`/store/*`), the same PostgresStore the graphs get as `config.store`, in the deployment's
 * database. Authorization events are the anchor's `store:put|get|delete|search|list_namespaces`; a filter is matched
 * against the item's value with its `namespace` and `key`, and an item outside it behaves as missing. Search and listing
 * match namespaces by whole labels and cut their pages after every check (storage/storeScan.ts).
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import type { BaseStore, Item } from '@langchain/langgraph-checkpoint';
import { validatePart } from '@graphx/kit/http/validation';
import { ForbiddenError, InputError, NotFoundError } from '@graphx/kit/errors';
import { authorizeFor } from '../../auth/appAuth';
import { contains, type AuthFilter } from '../../auth/authorization';
import { toWireJson } from '../../execution/serialize';
import { listNamespaces } from '../../storage/storeNamespaces';
import { searchStore } from '../../storage/storeSearchAll';
import {
  namespaceLabelProblem,
  storeDeleteBody,
  storeItemQuery,
  storeNamespacesBody,
  storePutBody,
  storeSearchBody,
} from '../schemas';
import { userOf, type RuntimeServices } from './context';

function toApiItem(item: Item): Record<string, unknown> {
  const { createdAt, updatedAt, ...rest } = item;
  return { ...rest, created_at: createdAt, updated_at: updatedAt };
}

const visible = (item: Pick<Item, 'namespace' | 'key' | 'value'>, filter: AuthFilter) =>
  contains({ ...item.value, namespace: item.namespace, key: item.key }, filter);

const isFiltering = (filter: AuthFilter) => Object.keys(filter).length > 0;

export function registerStoreRoutes(router: Router, services: RuntimeServices, store: BaseStore): void {
  const filterFor = (ctx: Koa.Context, action: string, value: Record<string, unknown>) =>
    authorizeFor(services.appAuth, userOf(ctx), 'store', action, value);

  /**
   * The item an operation addresses after the app's handler saw it: as the anchor, a handler may rewrite `namespace`
   * and `key` of the value it is given (`value.namespace = [user.identity, ...value.namespace]`), and the rewrite is
   * what is read or written. A rewritten namespace must still be one the store can hold.
   */
  const addressed = async (ctx: Koa.Context, action: string, value: { namespace: string[]; key: string }) => {
    const filter = await filterFor(ctx, action, value);
    if (!Array.isArray(value.namespace) || value.namespace.length === 0 || typeof value.key !== 'string' || value.key === '') {
      throw new InputError(`The store:${action} handler left no namespace or key to address.`);
    }
    const problem = value.namespace
      .map((label) => (typeof label === 'string' ? namespaceLabelProblem(label) : 'not a string'))
      .find(Boolean);
    if (problem) throw new InputError(`The store:${action} handler's namespace is refused: ${problem}`);
    return { filter, namespace: value.namespace, key: value.key };
  };

  router.put('/store/items', async (ctx) => {
    const body = validatePart<{
      namespace: string[];
      key: string;
      value: Record<string, unknown>;
      index?: false | string[] | null;
      ttl?: number | null;
    }>(storePutBody, ctx.state.body, 'body');
    const value = { ...body };
    const { filter, namespace, key } = await addressed(ctx, 'put', value);
    if (isFiltering(filter)) {
      const existing = await store.get(namespace, key);
      if (existing && !visible(existing, filter)) throw new NotFoundError('Item not found.');
      // As the anchor: the item as it would be written must itself be inside the caller's filter.
      if (!visible({ namespace, key, value: value.value }, filter)) throw new ForbiddenError('Not authorized');
    }
    await (store.put as (...args: unknown[]) => Promise<void>)(namespace, key, value.value, body.index ?? undefined, {
      ttl: body.ttl ?? undefined,
    });
    ctx.status = 204;
  });

  router.get('/store/items', async (ctx) => {
    const query = validatePart<{ namespace: string[]; key: string }>(storeItemQuery, { ...ctx.query }, 'query');
    const { filter, namespace, key } = await addressed(ctx, 'get', { namespace: query.namespace, key: query.key });
    const item = await store.get(namespace, key);
    // A missing item is `null` (as the anchor answers); one outside the caller's filter is 404.
    if (item && !visible(item, filter)) throw new NotFoundError('Item not found.');
    ctx.type = 'application/json';
    ctx.body = item ? toWireJson(toApiItem(item)) : 'null';
  });

  router.delete('/store/items', async (ctx) => {
    const body = validatePart<{ namespace: string[]; key: string }>(storeDeleteBody, ctx.state.body, 'body');
    const { filter, namespace, key } = await addressed(ctx, 'delete', { ...body });
    const item = await store.get(namespace, key);
    if (item && !visible(item, filter)) throw new NotFoundError('Item not found.');
    await store.delete(namespace, key);
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
    const options = { limit: body.limit, offset: body.offset, filter: body.filter ?? undefined, query: body.query || undefined };
    const items = await searchStore(
      store,
      body.namespace_prefix,
      options,
      isFiltering(filter) ? (item) => visible(item, filter) : undefined,
    );
    ctx.type = 'application/json';
    ctx.body = toWireJson({ items: items.map(toApiItem) });
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
    const namespaces = await listNamespaces(
      store,
      {
        prefix: body.prefix ?? undefined,
        suffix: body.suffix ?? undefined,
        maxDepth: body.max_depth ?? undefined,
        limit: body.limit,
        offset: body.offset,
      },
      // A namespace alone carries no value: only the filter's `namespace` can exclude it.
      isFiltering(filter) ? (namespace) => contains({ namespace }, { namespace: filter.namespace ?? namespace }) : undefined,
    );
    ctx.body = { namespaces };
  });
}
