/** Entry point of the compiled runtime (bin/runtime-bundle.js): the `runtime` and `dev` commands only. */
import { Command } from 'commander';
import { addRuntimeCommands, runProgram } from './runtimeCommands';

runProgram(addRuntimeCommands(new Command('graphx').description('graphx platform: deployed application')));
