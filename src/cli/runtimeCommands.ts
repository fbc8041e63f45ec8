/**
 * The `graphx` commands of the deployed application (runtime, dev), shared by the whole CLI (main.ts, through tsx)
 * and the runtime's own compiled entry (runtimeMain.ts, bundled by bin/runtime-bundle.js).
 */
import type { Command } from 'commander';
import { ConfigError } from '../config';

/** Adds `runtime` and `dev` to `program`. */
export function addRuntimeCommands(program: Command): Command {
  program
    .command('runtime')
    .description('serve one built application (started by a rollout; reads its environment)')
    .action(async () => (await import('../runtime/main')).runRuntimeFromEnv());

  program
    .command('dev')
    .description('serve one application directory alone, without the control plane')
    .requiredOption('--config <path>', 'path of graphx.json')
    .option('--port <port>', 'port', '2024')
    .option('--host <host>', 'interface', '127.0.0.1')
    .action(async (options: { config: string; port: string; host: string }) =>
      (await import('../runtime/main')).runDev({ configPath: options.config, port: Number(options.port), host: options.host }),
    );
  return program;
}

/** Parses `process.argv` and runs the command; a failure prints one line (a stack unless a ConfigError) and exits 1. */
export function runProgram(program: Command): void {
  program.parseAsync(process.argv).catch((error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(`graphx: ${error.message}`);
    } else {
      console.error(`graphx: ${(error as Error).stack ?? String(error)}`);
    }
    process.exit(1);
  });
}
