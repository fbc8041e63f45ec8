import type { EventEmitter } from 'node:events';
import { logger } from '@graphx/kit/logger';

/**
 * Logs, instead of dying on, the `error` a pg pool emits when PostgreSQL ends one of its idle connections (a restart,
 * a failover, `pg_terminate_backend`): with no listener Node ends the process. The pool replaces the connection on
 * its next use. Only name, code and message are logged: pg hangs the whole client (its connection settings) on the
 * error.
 */
export function survivePoolConnectionLoss(pool: EventEmitter, what: string): void {
  pool.on('error', (error: Error & { code?: string }) =>
    logger.warn({ err: { type: error.name, code: error.code, message: error.message } }, `idle ${what} connection failed`),
  );
}
