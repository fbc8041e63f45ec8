/**
 * `graphx runtime-prepare`: compiles an application's TypeScript graph, auth and http.app modules ahead of its first
 * start. Revision images run it as their last build step, so an instance whose root filesystem is read-only finds the
 * compiled modules next to their sources (typeScriptModules.ts writes nothing when they exist) and starts faster.
 */
import path from 'node:path';
import { loadAppConfig } from './appConfig';
import { compileTypeScript, isTypeScript } from './typeScriptModules';

/** Compiles every TypeScript module graphx.json names; prints one line per module. */
export async function prepareApp(configPath: string): Promise<void> {
  const config = loadAppConfig(configPath);
  const modules = [...config.graphs, ...(config.auth ? [config.auth] : []), ...(config.http.app ? [config.http.app] : [])].filter(
    (ref) => isTypeScript(ref.file),
  );
  for (const file of new Set(modules.map((ref) => ref.file))) {
    const output = await compileTypeScript(file);
    console.log(`compiled ${path.relative(config.appDir, file)} to ${path.basename(output)}`);
  }
}
