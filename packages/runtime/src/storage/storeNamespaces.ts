/**
 * Store namespaces listed as the anchor lists them: prefix and suffix matched by whole labels (the library matches
 * them as text, wildcards included), each namespace cut to `maxDepth` labels and listed once, in the store's order of
 * the first namespace under it, then paged.
 */
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import { hasPrefix, hasSuffix, SCAN_PAGE, scanPage } from './storeScan';

export interface NamespaceListing {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit: number;
  offset: number;
}

/**
 * One exact page of the namespaces `visible` keeps (an authorization filter; none: every namespace).
 * @throws InputError when an exact page needs more than MAX_SCANNED namespaces read.
 */
export async function listNamespaces(
  store: BaseStore,
  listing: NamespaceListing,
  visible?: (namespace: string[]) => boolean,
): Promise<string[][]> {
  const { prefix = [], suffix = [], maxDepth } = listing;
  const listed = new Set<string>();
  const keep = (namespace: string[]) => {
    if (!hasPrefix(namespace, prefix) || !hasSuffix(namespace, suffix)) return undefined;
    const shown = maxDepth === undefined ? namespace : namespace.slice(0, maxDepth);
    const id = JSON.stringify(shown);
    if (listed.has(id) || (visible && !visible(shown))) return undefined;
    listed.add(id);
    return shown;
  };
  // The library's maxDepth drops deeper namespaces instead of cutting them: it is applied here only.
  const read = (limit: number, offset: number) =>
    store.listNamespaces({ prefix: listing.prefix, suffix: listing.suffix, limit, offset });
  const firstStep = visible || maxDepth !== undefined ? SCAN_PAGE : listing.offset + listing.limit;
  return scanPage(read, keep, listing, firstStep);
}
