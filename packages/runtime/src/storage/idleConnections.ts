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
    logger.warn({ err: connectionErrorFields(error) }, `idle ${what} connection failed`),
  );
}

/** What of a pg connection's error goes into a log line: its name, code and message, never the client it carries. */
export function connectionErrorFields(error: Error & { code?: string }): { type: string; code?: string; message: string } {
  return { type: error.name, code: error.code, message: error.message };
}
