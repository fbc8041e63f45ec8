/**
 * The graphx-runtime image and the runtime bundle are made of the runtime package and the two it depends on, nothing
 * of the control plane: a control-plane edit leaves the image's content hash (its tag) and the bundle digest as they
 * were, an edit of the runtime changes both. Computed over a copy of the tree, so the real one is never touched.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { runtimeContentHash } from '../../src/containers/runtimeImage';

const ROOT = path.join(__dirname, '..', '..');
const { sourceDigest } = require(path.join(ROOT, 'packages', 'runtime', 'bin', 'bundle.js')) as {
  sourceDigest: (esbuildVersion: string, packagesDir: string) => string;
};

let copy: string;

beforeAll(() => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-runtime-inputs-'));
  for (const entry of ['bin', 'src', 'packages/runtime/package.json', 'packages/runtime/bin', 'packages/runtime/src']) {
    fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  for (const name of ['kit', 'contract'])
    fs.cpSync(path.join(ROOT, 'packages', name), path.join(copy, 'packages', name), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(copy, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
});

afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

const fingerprint = () => ({
  imageContentHash: runtimeContentHash(copy, ['base-image-id', 'dockerfile']),
  bundleDigest: sourceDigest('esbuild-version', path.join(copy, 'packages')),
});

test('a control-plane edit keeps the graphx-runtime content hash and the bundle digest; a runtime edit changes both', () => {
  const before = fingerprint();
  fs.appendFileSync(path.join(copy, 'src', 'api', 'app.ts'), '\n// a comment in the control plane\n');
  fs.appendFileSync(path.join(copy, 'src', 'config', 'index.ts'), '\nexport const unrelated = 1;\n');
  expect(fingerprint()).toEqual(before);

  fs.appendFileSync(path.join(copy, 'packages', 'runtime', 'src', 'server.ts'), '\n// a comment in the runtime\n');
  const afterRuntimeEdit = fingerprint();
  expect(afterRuntimeEdit.imageContentHash).not.toBe(before.imageContentHash);
  expect(afterRuntimeEdit.bundleDigest).not.toBe(before.bundleDigest);

  fs.appendFileSync(path.join(copy, 'packages', 'kit', 'src', 'logger.ts'), '\n// a comment in the kit\n');
  const afterKitEdit = fingerprint();
  expect(afterKitEdit.imageContentHash).not.toBe(afterRuntimeEdit.imageContentHash);
  expect(afterKitEdit.bundleDigest).not.toBe(afterRuntimeEdit.bundleDigest);
});

test('the runtime bundle is ASCII, comments included: V8 keeps its source as a one-byte string (half the heap)', () => {
  fs.appendFileSync(
    path.join(copy, 'packages', 'runtime', 'src', 'cli', 'main.ts'),
    "\n/** A kept comment — with ≥ and … in it. */\nexport const nonLatin1 = 'é — ≥ 🙂';\n",
  );
  const outfile = path.join(copy, 'bundle-under-test.js');
  execFileSync(process.execPath, [path.join(copy, 'packages', 'runtime', 'bin', 'bundle.js'), '--build', outfile]);
  const source = fs.readFileSync(outfile, 'utf8');
  expect(source).toContain('\\u2014');
  expect([...source].filter((char) => char.charCodeAt(0) > 0x7f)).toEqual([]);
  // The string itself is unchanged once evaluated.
  const literal = /nonLatin1 = ("[^"]*"|'[^']*')/.exec(source)![1]!;
  expect(vm.runInNewContext(literal)).toBe('é — ≥ 🙂');
});
