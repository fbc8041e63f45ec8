/** Worker logs at WARN in tests: state changes of every worker would bury the test output. */
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this process (jest runs files in band).
}
