/** The `graphx` command: start (the whole stack), worker (one worker alone), runtime (a deployed app), dev. */
import { Command } from 'commander';
import { addRuntimeCommands, runProgram } from './runtimeCommands';

const program = new Command('graphx').description('graphx platform: deploy and run agent servers');

program
  .command('start')
  .description('start the whole service on embedded defaults (PostgreSQL, Temporal dev server, API, worker, gateway)')
  .action(async () => (await import('./start')).runStart());

program
  .command('worker')
  .description('run one Temporal worker alone (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  .action(async () => (await import('./worker')).runWorkerCommand());

runProgram(addRuntimeCommands(program));
