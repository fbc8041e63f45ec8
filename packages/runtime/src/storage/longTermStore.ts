/**
 * The long-term store (`/store/*`, `config.store`): LangGraph's PostgresStore on its own small pool, which the library
 * builds and never watches: unwatched, one database restart would take every deployed app down (idleConnections.ts).
 * The pool is reached inside the library's object, so a release that moves it stops the start here, loudly, rather
 * than bringing the crash back.
 */
import type { EventEmitter } from 'node:events';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import { survivePoolConnectionLoss } from './idleConnections';

export function createLongTermStore(databaseUri: string): PostgresStore {
  const store = new PostgresStore({
    connectionOptions: { connectionString: databaseUri, max: 5 },
    ensureTables: false,
    // TTL sweeps run in every instance, harmlessly.
    ttl: { refreshOnRead: true, sweepIntervalMinutes: 5 },
  });
  const pool = (store as unknown as { core?: { pool?: EventEmitter } }).core?.pool;
  if (!pool || typeof pool.on !== 'function') {
    throw new Error('PostgresStore no longer keeps its pool at store.core.pool; update createLongTermStore');
  }
  survivePoolConnectionLoss(pool, 'store');
  return store;
}
