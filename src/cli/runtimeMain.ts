/** Entry point of the compiled runtime (bin/runtime-bundle.js): the `runtime` and `dev` commands only. */
import { Command } from 'commander';
import { addRuntimeCommands, runProgram } from './runtimeCommands';

const program = new Command('graphx').description('graphx platform: deployed application');
// As in main.ts: a usage error exits 2.
runProgram(addRuntimeCommands(program.exitOverride()));
