/**
 * Store search under a namespace prefix matched by whole labels (see storeScan.ts), where an empty prefix searches
 * every namespace as the anchors answer it. PostgresStore refuses an empty prefix, so that search runs under each root
 * label (read from a bounded scan of the namespaces) and the pages merge, each item once: best score first for a
 * semantic query, else newest first, as each page is ordered.
 */
import type { BaseStore, SearchItem } from '@langchain/langgraph-checkpoint';
import { InputError } from '@graphx/kit/errors';
import { hasPrefix, MAX_SCANNED, SCAN_PAGE, scanPage } from './storeScan';

export interface StoreSearchOptions {
  filter?: Record<string, unknown>;
  limit: number;
  offset: number;
  query?: string;
}

const NAMESPACE_PAGE = 1000;

/**
 * One exact page of the items under `prefix` that `visible` keeps (an authorization filter; none: every item).
 * @throws InputError when an exact page needs more than MAX_SCANNED items read.
 */
export async function searchStore(
  store: BaseStore,
  prefix: string[],
  options: StoreSearchOptions,
  visible?: (item: SearchItem) => boolean,
): Promise<SearchItem[]> {
  const keep = (item: SearchItem) => (hasPrefix(item.namespace, prefix) && (visible?.(item) ?? true) ? item : undefined);
  const read = (limit: number, offset: number) => libraryPage(store, prefix, { ...options, limit, offset });
  const wanted = options.offset + options.limit;
  if (!visible && wanted > MAX_SCANNED) {
    // A deep page with no authorization filter: the library's own page, checked (short only where a namespace shares
    // the text of the prefix, e.g. `alice` under `ali`).
    return (await read(options.limit, options.offset)).filter((item) => keep(item));
  }
  // With no authorization filter the first read is the page's span: only a namespace sharing the prefix's text costs more.
  return scanPage(read, keep, options, visible ? SCAN_PAGE : wanted);
}

async function libraryPage(store: BaseStore, prefix: string[], options: StoreSearchOptions): Promise<SearchItem[]> {
  if (prefix.length > 0) return store.search(prefix, options);
  const roots = await rootLabels(store);
  const window = { ...options, limit: options.offset + options.limit, offset: 0 };
  const pages = await Promise.all(roots.map((root) => store.search([root], window)));
  // The library matches a prefix as text (`ali` finds `alice`): an item may come back under two roots.
  const unique = new Map(pages.flat().map((item) => [JSON.stringify([item.namespace, item.key]), item]));
  return [...unique.values()]
    .sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || new Date(b.createdAt).getTime() - new Date(a.createdAt).getTime())
    .slice(options.offset, options.offset + options.limit);
}

/** The distinct first labels of every namespace (`langgraph` is reserved: nothing is stored under it). */
async function rootLabels(store: BaseStore): Promise<string[]> {
  const roots = new Set<string>();
  for (let offset = 0; offset < MAX_SCANNED; offset += NAMESPACE_PAGE) {
    const namespaces = await store.listNamespaces({ limit: NAMESPACE_PAGE, offset });
    for (const namespace of namespaces) if (namespace[0] && namespace[0] !== 'langgraph') roots.add(namespace[0]);
    if (namespaces.length < NAMESPACE_PAGE) return [...roots];
  }
  throw new InputError(`A search of every namespace scans at most ${MAX_SCANNED} namespaces: give a namespace_prefix.`);
}
