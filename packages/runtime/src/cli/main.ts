/** Entry point of the compiled runtime (bin/bundle.js): the `runtime`, `runtime-prepare` and `dev` commands only. */
import { Command } from 'commander';
import { addRuntimeCommands, runProgram } from './commands';

const program = new Command('graphx').description('graphx platform: deployed application');
// As in main.ts: a usage error exits 2.
runProgram(addRuntimeCommands(program.exitOverride()));
