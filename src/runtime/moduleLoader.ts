/**
 * Imports the application's own modules (.js, .mjs, .cjs, .ts) with Node's resolution from the module's own
 * directory, so user code gets the repository's dependencies, not ours. TypeScript goes through tsx's ESM hooks,
 * registered once with `module.register` (tsx's `tsImport` helper fails to locate its loader on Node 20).
 */
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config';
import type { ModuleExportRef } from './appConfig';

let hooksRegistered = false;

function ensureTypeScriptHooks(): void {
  if (hooksRegistered) return;
  // tsx/esm refuses to start without initialize data (it assumes --loader otherwise).
  register('tsx/esm', { parentURL: pathToFileURL(__filename), data: {} });
  hooksRegistered = true;
}

// A real dynamic import even where TypeScript compiles `import()` to `require()` (CommonJS output).
const dynamicImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<any>;

/**
 * Loads `ref.exportName` from `ref.file`.
 * @throws ConfigError when the module cannot be loaded or lacks the export.
 */
export async function importExport(ref: ModuleExportRef): Promise<unknown> {
  ensureTypeScriptHooks();
  let namespace: Record<string, unknown>;
  try {
    namespace = await dynamicImport(pathToFileURL(ref.file).href);
  } catch (error) {
    throw new ConfigError(`Cannot load ${ref.file}: ${(error as Error).message}`);
  }
  const value = namespace[ref.exportName] ?? (namespace.default as Record<string, unknown> | undefined)?.[ref.exportName];
  if (value === undefined) throw new ConfigError(`${ref.file} has no export named ${ref.exportName}`);
  return value;
}
