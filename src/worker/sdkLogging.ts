/** Where the Temporal SDK's own log lines go. */
import type { LogEntry } from '@temporalio/worker';
import { logger } from '@graphx/kit/logger';

const SDK_LEVELS: Record<string, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** A build-queue worker has no workflows by design; the SDK warns about it on every start. */
export const EXPECTED_SDK_WARNINGS = /^No workflows registered, not polling for workflow tasks/;

/** SDK log entries go through our logger (one format, redaction), minus the warning our topology always causes. */
export function logSdkEntry(entry: LogEntry): void {
  if (EXPECTED_SDK_WARNINGS.test(entry.message)) return;
  logger[SDK_LEVELS[entry.level] ?? 'info']({ component: 'temporal-sdk', ...entry.meta }, entry.message);
}
