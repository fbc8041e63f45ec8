/**
 * The `graphx` command: start (the whole stack), serve (the same in production), worker (one worker alone), runtime (a deployed app), dev, and the CI
 * commands (deploy, wait, status, logs, revisions, deployments; see ciCommands.ts). Usage errors exit 2.
 */
import { Command, Option } from 'commander';
import { registerCiCommands } from './ciCommands';
import { addRuntimeCommands, runProgram } from '@graphx/runtime/cli/commands';

const { version } = require('../../package.json') as { version: string };

const program = new Command('graphx').description('graphx platform: deploy and run agent servers');
// Thrown instead of exiting, so a usage error gets the conventional exit 2 (subcommands inherit this).
program.exitOverride().version(version, '-V, --version');

program
  .command('start')
  .description('start the whole service on embedded defaults (PostgreSQL, Temporal dev server, API, worker, gateway)')
  .action(async () => (await import('./start')).runStart());

program
  .command('serve')
  .description('production: API, gateway and worker against external PostgreSQL and Temporal, no development defaults')
  .action(async () => (await import('./start')).runServe());

program
  .command('worker')
  .description('run one Temporal worker alone (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  // Used by `graphx start`, which runs its worker as a child process.
  .addOption(new Option('--ready-file <path>', 'write the metrics URL here once the worker polls').hideHelp())
  .addOption(new Option('--stack-pid <pid>', 'shut down when this parent process is gone').hideHelp())
  .action(async (options: { readyFile?: string; stackPid?: string }) => (await import('./worker')).runWorkerCommand(options));

program
  .command('images')
  .description('container images')
  .command('build')
  .description('build the runtime image graphx-runtime:<version> (and its base), unless one with the same content exists')
  .option('--force', 'build even when an image with the same content hash exists')
  .action(async (options: { force?: boolean }) => (await import('./images')).runImagesBuild(options));

addRuntimeCommands(program);
registerCiCommands(program);
runProgram(program);
