/**
 * The anchor's last resort for a graph's JSON schemas (an `Annotation` graph has no runtime schema): the TypeScript
 * type checker reads the graph's source and the state, input, output and config types of the exported graph and of
 * the subgraphs it adds as nodes become JSON schemas. The extractor is the anchor's own (langgraph-api's parser, with
 * its typescript-json-schema fork), vendored in ./staticSchemas/vendor; it runs in a short-lived child process, as
 * the anchor runs it in a worker: a type-check takes seconds of CPU and must not hold up the event loop.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { GraphSchema } from './graphSchemas';

const execFileAsync = promisify(execFile);

// From src/ (through tsx) and from dist/ (the bundle) alike: both sit in the package's root.
const PARSER = path.resolve(__dirname, '..', 'src', 'staticSchemas', 'vendor', 'parser.mjs');
const TIMEOUT_MS = 30_000;

// The extractor prints the type checker's diagnostics with console.log: they go to stderr, the result to stdout.
const EXTRACTOR = `
const [parser, sourceFile, exportSymbol] = process.argv.slice(1);
console.log = console.info = console.warn = (...args) => process.stderr.write(args.join(' ') + '\\n');
import(require('node:url').pathToFileURL(parser).href)
  .then(({ SubgraphExtractor }) => {
    const [schemas] = SubgraphExtractor.extractSchemas([{ sourceFile, exportSymbol }], { strict: false });
    process.stdout.write(JSON.stringify(schemas));
  })
  .catch((error) => { process.stderr.write(String(error?.stack ?? error)); process.exit(1); });
`;

/** Schemas by graph name: the export's name for the graph itself, `<export>|<node>|<node>` for its subgraphs. */
export type StaticGraphSchemas = Record<string, GraphSchema>;

/**
 * The schemas the type checker reads from `file` for its export `exportName` and the subgraphs under it.
 * @throws Error when the source cannot be type-checked within the time limit.
 */
export async function extractStaticGraphSchemas(file: string, exportName: string): Promise<StaticGraphSchemas> {
  const { stdout } = await execFileAsync(process.execPath, ['-e', EXTRACTOR, PARSER, file, exportName], {
    cwd: path.dirname(file),
    timeout: TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
    encoding: 'utf8',
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`schema extraction of ${file} failed: ${error.stderr?.trim().split('\n').at(-1) || error.message}`);
  });
  return JSON.parse(stdout) as StaticGraphSchemas;
}

/** The schema of the graph (`namespace` empty) or of its subgraph at `namespace` (`node|node`), else the graph's. */
export function staticSchemaAt(schemas: StaticGraphSchemas, namespace = ''): GraphSchema | undefined {
  const root = Object.keys(schemas).find((name) => !name.includes('|'));
  if (root === undefined) return undefined;
  return (namespace ? schemas[`${root}|${namespace}`] : undefined) ?? schemas[root];
}
