/** How a runtime command that failed ends the process (commands.ts, and main.ts's direct `runtime` start). */
import { EXIT } from '@graphx/contract/exitCodes';
import { ConfigError } from '@graphx/kit/errors';

/** A ConfigError exits 2 with one line; any other failure prints its stack and exits 1. */
export function failAndExit(error: unknown): never {
  if (error instanceof ConfigError) {
    console.error(`graphx: ${error.message}`);
    process.exit(EXIT.usage);
  }
  console.error(`graphx: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
}
