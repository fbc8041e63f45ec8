/** The `graphx` command: start (the whole stack), worker (one worker alone), runtime (a deployed app), dev. */
import { Command } from 'commander';
import { ConfigError } from '../config';

const program = new Command('graphx').description('graphx platform: deploy and run agent servers');

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
  .command('images')
  .description('container images')
  .command('build')
  .description('build the runtime image graphx-runtime:<version> (and its base), unless one with the same content exists')
  .option('--force', 'build even when an image with the same content hash exists')
  .action(async (options: { force?: boolean }) => (await import('./images')).runImagesBuild(options));

program
  .command('dev')
  .description('serve one application directory alone, without the control plane')
  .requiredOption('--config <path>', 'path of graphx.json')
  .option('--port <port>', 'port', '2024')
  .option('--host <host>', 'interface', '127.0.0.1')
  .action(async (options: { config: string; port: string; host: string }) =>
    (await import('../runtime/main')).runDev({ configPath: options.config, port: Number(options.port), host: options.host }),
  );

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`graphx: ${error.message}`);
  } else {
    console.error(`graphx: ${(error as Error).stack ?? String(error)}`);
  }
  process.exit(1);
});
