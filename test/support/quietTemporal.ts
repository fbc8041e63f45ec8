/**
 * Worker logs at WARN in tests (state changes of every worker would bury the test output), to stderr as the SDK
 * writes them, minus the warning a build-queue worker always gives (src/worker/index.ts).
 */
import { inspect } from 'node:util';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { EXPECTED_SDK_WARNINGS } from '../../src/worker/sdkLogging';

function writeEntry(entry: LogEntry): void {
  if (EXPECTED_SDK_WARNINGS.test(entry.message)) return;
  const meta = entry.meta === undefined ? '' : ` ${inspect(entry.meta, { depth: 4 })}`;
  process.stderr.write(`${new Date().toISOString()} [${entry.level}] ${entry.message}${meta}\n`);
}

try {
  Runtime.install({ logger: new DefaultLogger('WARN', writeEntry) });
} catch {
  // Already installed in this process (jest runs files in band).
}
