/**
 * JSON schemas of a graph's state, input, output and config, read from the graph object at run time as the anchor's
 * JS server does first: a `StateSchema` (its own JSON schema), Zod schemas registered with `withLangGraph` (the
 * app's own `@langchain/langgraph/zod/schema`, so its registry is the one the graph filled), then plain Zod, then
 * the anchor's last resort, the TypeScript type checker's reading of the graph's source (staticGraphSchemas.ts).
 * When that fails too, an object schema names the graph's channels.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface GraphSchema {
  state?: Record<string, unknown>;
  input?: Record<string, unknown>;
  output?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** Apart from `config` in Python graphs (LangGraph.js has one for both). */
  context?: Record<string, unknown>;
}

// A real dynamic import even where TypeScript compiles `import()` to `require()` (CommonJS output).
const dynamicImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<any>;

/**
 * Imports `specifier` as the application's ES modules see it (the package's `import` export), so module-level
 * singletons such as LangGraph's schema registry are the instances the app's graphs used.
 */
export async function importAsApp(appDir: string, specifier: string, condition: 'import' | 'require' = 'import'): Promise<any> {
  const appRequire = createRequire(path.join(appDir, 'noop.js'));
  const [scope, name] = specifier.split('/');
  const packageName = scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  const subpath = `.${specifier.slice(packageName.length)}`;
  try {
    const packageJson = appRequire.resolve(`${packageName}/package.json`);
    const manifest = JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { exports?: Record<string, any> };
    const exported = manifest.exports?.[subpath];
    const target = exported?.[condition]?.default ?? exported?.[condition];
    if (typeof target === 'string') return await dynamicImport(pathToFileURL(path.join(path.dirname(packageJson), target)).href);
  } catch {
    // No package.json export: fall back to CommonJS resolution below.
  }
  return dynamicImport(pathToFileURL(appRequire.resolve(specifier)).href);
}

/** Imports a package as the application resolves it, from its ES (`import`) or CommonJS (`require`) build. */
export type ModuleLoader = (specifier: string, condition?: 'import' | 'require') => Promise<any>;

interface GraphBuilderInternals {
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
  channels?: Record<string, unknown>;
}

interface StateSchemaLike {
  getJsonSchema(): Record<string, unknown>;
  getInputJsonSchema(): Record<string, unknown>;
}

const PARTIAL_STATE_SCHEMA = Symbol.for('langgraph.state.partial');
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

function isStateSchemaLike(value: unknown): value is StateSchemaLike {
  const candidate = value as StateSchemaLike | null;
  return typeof candidate?.getJsonSchema === 'function' && typeof candidate?.getInputJsonSchema === 'function';
}

function fromStateSchema(builder: GraphBuilderInternals): GraphSchema | undefined {
  const { _schemaRuntimeDefinition: state, _inputRuntimeDefinition: input, _outputRuntimeDefinition: output } = builder;
  if (!isStateSchemaLike(state) && !isStateSchemaLike(input) && !isStateSchemaLike(output)) return undefined;
  return {
    state: isStateSchemaLike(state) ? state.getJsonSchema() : undefined,
    input: isStateSchemaLike(input)
      ? input.getInputJsonSchema()
      : input === PARTIAL_STATE_SCHEMA && isStateSchemaLike(state)
        ? state.getInputJsonSchema()
        : undefined,
    output: isStateSchemaLike(output) ? output.getJsonSchema() : undefined,
  };
}

/**
 * The registry is a module-level singleton, and an app's graphs use the ES module or the CommonJS build of
 * LangGraph depending on how they were loaded: both are asked, ES first.
 */
async function fromZodRegistry(graph: unknown, load: ModuleLoader): Promise<GraphSchema | undefined> {
  return (await fromZodRegistryBuild(graph, load, 'import')) ?? fromZodRegistryBuild(graph, load, 'require');
}

async function fromZodRegistryBuild(
  graph: unknown,
  load: ModuleLoader,
  condition: 'import' | 'require',
): Promise<GraphSchema | undefined> {
  try {
    const zod = await load('@langchain/langgraph/zod/schema', condition);
    const schema: GraphSchema = {
      state: zod.getUpdateTypeSchema(graph),
      input: zod.getInputTypeSchema(graph),
      output: zod.getOutputTypeSchema(graph),
      config: zod.getConfigTypeSchema(graph),
    };
    return Object.values(schema).some((value) => value != null) ? schema : undefined;
  } catch {
    return undefined;
  }
}

async function fromPlainZod(builder: GraphBuilderInternals, load: ModuleLoader): Promise<GraphSchema | undefined> {
  try {
    const { toJsonSchema } = await load('@langchain/core/utils/json_schema');
    const { isZodSchemaV3, isZodSchemaV4 } = await load('@langchain/core/utils/types');
    const convert = (value: unknown) =>
      value && (isZodSchemaV4(value) || isZodSchemaV3(value)) ? toJsonSchema(value) : undefined;
    const state = convert(builder._schemaRuntimeDefinition);
    const schema: GraphSchema = {
      state,
      input: convert(builder._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : undefined),
      output: convert(builder._outputRuntimeDefinition),
      config: convert(builder._configRuntimeSchema),
    };
    return Object.values(schema).some((value) => value != null) ? schema : undefined;
  } catch {
    return undefined;
  }
}

/** An object schema naming the graph's state channels (for graphs whose state has no runtime schema). */
function fromChannels(graph: { builder?: GraphBuilderInternals; channels?: Record<string, unknown> }): GraphSchema {
  const names = Object.keys(graph.builder?.channels ?? graph.channels ?? {}).filter((name) => !name.startsWith('__'));
  const object = { type: 'object', properties: Object.fromEntries(names.map((name) => [name, {}])), $schema: DRAFT_07 };
  return { state: object, input: object, output: object, config: { type: 'object', properties: {}, $schema: DRAFT_07 } };
}

/**
 * The schemas of a compiled graph: its runtime schemas, else `fromSource` (the type checker's), else its channel
 * names. Never throws.
 */
export async function graphSchemaOf(
  graph: unknown,
  load: ModuleLoader,
  fromSource: () => Promise<GraphSchema | undefined> = async () => undefined,
): Promise<GraphSchema> {
  // A Python graph's schemas come from the Python library (the executor).
  const python = graph as { pythonSchemas?: () => Promise<GraphSchema> };
  if (typeof python.pythonSchemas === 'function') return python.pythonSchemas();
  const builder = (graph as { builder?: GraphBuilderInternals }).builder ?? {};
  const found =
    fromStateSchema(builder) ??
    (await fromZodRegistry(graph, load)) ??
    (await fromPlainZod(builder, load)) ??
    (await fromSource());
  const fallback = fromChannels(graph as { builder?: GraphBuilderInternals });
  return {
    state: found?.state ?? fallback.state,
    input: found?.input ?? found?.state ?? fallback.input,
    output: found?.output ?? found?.state ?? fallback.output,
    config: found?.config ?? fallback.config,
  };
}
