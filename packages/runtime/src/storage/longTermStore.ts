/**
 * The long-term store (`/store/*`, `config.store`): LangGraph's PostgresStore on its own small pool, which the library
 * builds and never watches: unwatched, one database restart would take every deployed app down (idleConnections.ts).
 * The pool is reached inside the library's object, so a release that moves it stops the start here, loudly, rather
 * than bringing the crash back.
 */
import type { EventEmitter } from 'node:events';
import type { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import type * as StoreModule from '@langchain/langgraph-checkpoint-postgres/store';
import { survivePoolConnectionLoss } from './idleConnections';

/** The store's package, required when a store is made (an app with only Python graphs may never make one). */
export const STORE_MODULE = '@langchain/langgraph-checkpoint-postgres/store';

/** How often expired store items are deleted (items put with a `ttl`). */
export const STORE_TTL_SWEEP_MINUTES = 5;

export function createLongTermStore(databaseUri: string): PostgresStore {
  const { PostgresStore: Store } = require(STORE_MODULE) as typeof StoreModule;
  const store = new Store({
    connectionOptions: { connectionString: databaseUri, max: 5 },
    ensureTables: false,
    // TTL sweeps run in every instance, harmlessly.
    ttl: { refreshOnRead: true, sweepIntervalMinutes: STORE_TTL_SWEEP_MINUTES },
  });
  const pool = (store as unknown as { core?: { pool?: EventEmitter } }).core?.pool;
  if (!pool || typeof pool.on !== 'function') {
    throw new Error('PostgresStore no longer keeps its pool at store.core.pool; update createLongTermStore');
  }
  survivePoolConnectionLoss(pool, 'store');
  return store;
}
