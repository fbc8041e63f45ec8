/**
 * Imports the application's own modules (.js, .mjs, .cjs, .ts) with Node's resolution from the module's own
 * directory, so user code gets the repository's dependencies, not ours. TypeScript is compiled once when loaded
 * (typeScriptModules.ts) into a plain ES module next to its source; no transpiler stays in the process.
 */
import { pathToFileURL } from 'node:url';
import { ConfigError } from '@graphx/kit/errors';
import type { ModuleExportRef } from './appConfig';
import { compileTypeScript, isTypeScript } from './typeScriptModules';

// A real dynamic import even where TypeScript compiles `import()` to `require()` (CommonJS output).
const dynamicImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<any>;

/**
 * Loads `ref.exportName` from `ref.file`.
 * @throws ConfigError when the module cannot be compiled or loaded, or lacks the export.
 */
export async function importExport(ref: ModuleExportRef): Promise<unknown> {
  let namespace: Record<string, unknown>;
  try {
    const file = isTypeScript(ref.file) ? await compileTypeScript(ref.file) : ref.file;
    namespace = await dynamicImport(pathToFileURL(file).href);
  } catch (error) {
    throw new ConfigError(`Cannot load ${ref.file}: ${(error as Error).message}`);
  }
  const value = namespace[ref.exportName] ?? (namespace.default as Record<string, unknown> | undefined)?.[ref.exportName];
  if (value === undefined) throw new ConfigError(`${ref.file} has no export named ${ref.exportName}`);
  return value;
}
