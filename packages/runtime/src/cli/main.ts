/**
 * Entry point of the compiled runtime (bin/bundle.js): the `runtime`, `runtime-prepare` and `dev` commands only.
 * `graphx runtime` alone, what every revision's container and process start, takes no option: it starts the server
 * without commander, whose ~0.45 MB of heap would otherwise stay for the server's whole life. Anything else (other
 * commands, `--help`, an option) goes through commander as before.
 */
import { failAndExit } from './failure';

if (process.argv.length === 3 && process.argv[2] === 'runtime') {
  import('../main').then((main) => main.runRuntimeFromEnv()).catch(failAndExit);
} else {
  void import('./commands').then(async ({ addRuntimeCommands, runProgram }) => {
    const { Command } = await import('commander');
    const program = new Command('graphx').description('graphx platform: deployed application');
    // As in main.ts: a usage error exits 2.
    runProgram(addRuntimeCommands(program.exitOverride()));
  });
}
