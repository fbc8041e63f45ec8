/**
 * The `graphx` commands of the deployed application (runtime, dev), shared by the whole CLI (main.ts, through tsx)
 * and the runtime's own compiled entry (main.ts, bundled by bin/bundle.js).
 */
import { CommanderError, type Command } from 'commander';
import { INSTANCE_ENV } from '@graphx/contract/instanceEnv';
import { EXIT } from '@graphx/contract/exitCodes';
import { failAndExit } from './failure';

/** Adds `runtime`, `runtime-prepare` and `dev` to `program`. */
export function addRuntimeCommands(program: Command): Command {
  program
    .command('runtime')
    .description('serve one built application (started by a rollout; reads its environment)')
    .action(async () => (await import('../main')).runRuntimeFromEnv());

  program
    .command('runtime-prepare')
    .description("compile the application's TypeScript graphs ahead of its first start (image builds run it)")
    .option('--config <path>', 'path of graphx.json (default: $GRAPHX_CONFIG_PATH, else graphx.json)')
    .action(async (options: { config?: string }) =>
      (await import('../prepare')).prepareApp(options.config ?? process.env[INSTANCE_ENV.configPath] ?? 'graphx.json'),
    );

  program
    .command('dev')
    .description('serve one application directory alone, without the control plane')
    .requiredOption('--config <path>', 'path of graphx.json')
    .option('--port <port>', 'port', '2024')
    .option('--host <host>', 'interface', '127.0.0.1')
    .action(async (options: { config: string; port: string; host: string }) =>
      (await import('../main')).runDev({ configPath: options.config, port: Number(options.port), host: options.host }),
    );
  return program;
}

/**
 * Parses `process.argv` and runs the command. A usage error (with `exitOverride()`) or a ConfigError exits 2 with one
 * line; any other failure prints its stack and exits 1.
 */
export function runProgram(program: Command): void {
  program.parseAsync(process.argv).catch((error: unknown) => {
    if (error instanceof CommanderError) {
      // Commander has printed the message (or the help / version) already.
      process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
    }
    failAndExit(error);
  });
}
