import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileTypeScript } from '../../src/typeScriptModules';

describe("the runtime's compilation of an application's TypeScript modules", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-tsmodules-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  /** An application folder with `files`, and a package.json of `type`. */
  function app(type: 'module' | 'commonjs', files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(root, 'app-'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', type }));
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
  }

  /** What a fresh Node process gets from importing `file` (no TypeScript loader anywhere). */
  function exportsOf(file: string): Record<string, unknown> {
    const script = `import(${JSON.stringify(pathToFileURL(file).href)}).then((m) => process.stdout.write(JSON.stringify({ ...m.default, ...m })))`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as Record<string, unknown>;
  }

  const source = [
    "import { helper } from './lib/helper.js';",
    'const typed: number = 41;',
    'export const answer = helper(typed);',
    'export const dirname = __dirname;',
    "export const platform = require('node:os').platform();",
  ].join('\n');
  const helper = 'export function helper(value: number): number { return value + 1; }';

  it('compiles a .ts file of an ES package into an ES module next to it, with require and __dirname defined', async () => {
    const dir = app('module', { 'src/graph.ts': source, 'src/lib/helper.ts': helper });
    const output = await compileTypeScript(path.join(dir, 'src', 'graph.ts'));
    expect(path.dirname(output)).toBe(path.join(dir, 'src'));
    expect(output).toMatch(/\.graph\.[0-9a-f]+\.graphx\.mjs$/);
    expect(exportsOf(output)).toEqual({ answer: 42, dirname: path.join(dir, 'src'), platform: os.platform() });
  });

  it('compiles a .ts file of a CommonJS package into a CommonJS module, as Node would treat it', async () => {
    const dir = app('commonjs', { 'graph.ts': source, 'lib/helper.ts': helper });
    const output = await compileTypeScript(path.join(dir, 'graph.ts'));
    expect(output).toMatch(/\.graph\.[0-9a-f]+\.graphx\.cjs$/);
    expect(exportsOf(output)).toMatchObject({ answer: 42, dirname: dir });
  });

  it('rejects a module that does not compile with the file and line in the message', async () => {
    const dir = app('module', { 'broken.ts': 'export const x = ;' });
    await expect(compileTypeScript(path.join(dir, 'broken.ts'))).rejects.toThrow(/broken\.ts:1/);
  });
});
