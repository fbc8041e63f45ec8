/**
 * The `graphx` command: start (the whole stack), worker (one worker alone), runtime (a deployed app), dev, and the CI
 * commands (deploy, wait, status, logs, revisions, deployments; see ciCommands.ts). Usage errors exit 2.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config';
import { registerCiCommands } from './ciCommands';
import { EXIT } from './exitCodes';

const { version } = require('../../package.json') as { version: string };

const program = new Command('graphx').description('graphx platform: deploy and run agent servers');
// Thrown instead of exiting, so a usage error gets the conventional exit 2 (subcommands inherit this).
program.exitOverride().version(version, '-V, --version');

program
  .command('start')
  .description('start the whole service on embedded defaults (PostgreSQL, Temporal dev server, API, worker, gateway)')
  .action(async () => (await import('./start')).runStart());

program
  .command('worker')
  .description('run one Temporal worker alone (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  .action(async () => (await import('./worker')).runWorkerCommand());

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

registerCiCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CommanderError) {
    // Commander has printed the message (or the help / version) already.
    process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
  }
  if (error instanceof ConfigError) {
    console.error(`graphx: ${error.message}`);
    process.exit(EXIT.usage);
  }
  console.error(`graphx: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
