/**
 * The application's TypeScript modules, compiled with esbuild when the runtime loads them (a few tens of ms), so a
 * deployed app carries no TypeScript loader (tsx's hooks cost a loader thread and ~100 MB of RSS; decisions.md).
 *
 * One graph or auth file becomes one bundle of the application's own sources (its relative imports, its tsconfig
 * `paths`), written next to the source as `.<name>.<digest>.graphx.mjs|cjs`: packages stay imports, so Node resolves
 * them from the same directory exactly as it would the source, and `import.meta.url` keeps its directory. The module
 * kind is the one Node (and tsx) give the source: `.mts` ES, `.cts` CommonJS, `.ts` by the nearest package.json
 * `type`. An ES module gets `require`, `__dirname` and `__filename` for CommonJS-style code.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;

/** True for a file the runtime must compile before importing it. */
export function isTypeScript(file: string): boolean {
  return TYPESCRIPT.test(file) && !file.endsWith('.d.ts');
}

/** `module` when `.ts`/`.js` files under `dir` are ES modules (nearest package.json `type`), else `commonjs`. */
export function packageModuleKind(dir: string): 'module' | 'commonjs' {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const manifest = path.join(current, 'package.json');
    if (fs.existsSync(manifest)) {
      try {
        return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { type?: string }).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (path.dirname(current) === current) return 'commonjs';
  }
}

function isEsModule(source: string): boolean {
  if (source.endsWith('.mts')) return true;
  if (source.endsWith('.cts')) return false;
  return packageModuleKind(path.dirname(source)) === 'module';
}

function preamble(source: string): string {
  return [
    "import { createRequire as __graphxCreateRequire } from 'node:module';",
    `const __graphxFilename = ${JSON.stringify(source)};`,
    `const __graphxDirname = ${JSON.stringify(path.dirname(source))};`,
    'const __graphxRequire = __graphxCreateRequire(import.meta.url);',
  ].join('\n');
}

const compiled = new Map<string, Promise<string>>();
// One compilation at a time: starting several compilers at once would only compete for the same cores.
let previous: Promise<unknown> = Promise.resolve();

/**
 * Compiles `source` (once per process) and resolves with the path of the module to import instead. Stale outputs
 * of the same source are removed (best effort: an instance starting concurrently writes the same bytes under the
 * same name).
 * @throws Error with esbuild's message when the source does not compile or the directory is not writable.
 */
export function compileTypeScript(source: string): Promise<string> {
  let output = compiled.get(source);
  if (!output) {
    output = previous.then(
      () => compile(source),
      () => compile(source),
    );
    previous = output;
    compiled.set(source, output);
  }
  return output;
}

// Runs in a short-lived `node` process: esbuild's service (a worker thread or a child process) and its JS never
// enter the serving process, and nothing of them outlives the compilation.
const COMPILER = `
const [esbuildPath, options] = [process.argv[1], JSON.parse(process.argv[2])];
require(esbuildPath).build(options).then(
  (result) => process.stdout.write(result.outputFiles[0].text),
  (error) => { process.stderr.write(error.message); process.exit(1); },
);
`;

async function compile(source: string): Promise<string> {
  const esm = isEsModule(source);
  const options = {
    entryPoints: [source],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: esm ? 'esm' : 'cjs',
    target: 'node20',
    write: false,
    outfile: path.join(path.dirname(source), esm ? 'compiled.mjs' : 'compiled.cjs'),
    logLevel: 'silent',
    // Replaces only free uses: a module's own `require` or `__dirname` binding is left alone.
    ...(esm && {
      define: { require: '__graphxRequire', __dirname: '__graphxDirname', __filename: '__graphxFilename' },
      banner: { js: preamble(source) },
    }),
  };
  const { stdout: code } = await execFileAsync(
    process.execPath,
    ['-e', COMPILER, require.resolve('esbuild'), JSON.stringify(options)],
    { maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(error.stderr?.trim() || error.message);
  });
  const digest = crypto.createHash('sha256').update(code).digest('hex').slice(0, 12);
  const stem = `.${path.basename(source).replace(TYPESCRIPT, '')}.`;
  const target = path.join(path.dirname(source), `${stem}${digest}.graphx.${esm ? 'mjs' : 'cjs'}`);
  if (!fs.existsSync(target)) {
    const temporary = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, code);
    fs.renameSync(temporary, target);
  }
  for (const name of fs.readdirSync(path.dirname(source))) {
    if (name.startsWith(stem) && /\.graphx\.[cm]js$/.test(name) && name !== path.basename(target)) {
      fs.rmSync(path.join(path.dirname(source), name), { force: true });
    }
  }
  return target;
}
