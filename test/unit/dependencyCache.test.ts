import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dependencyCacheKey, restoreDependencies, saveDependencies } from '../../src/builders/host/dependencyCache';

describe('dependency cache of builds', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-depcache-'));
  const cacheRoot = path.join(root, 'cache');
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  function app(lock: string): string {
    const dir = path.join(root, `app-${crypto.randomBytes(3).toString('hex')}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"a","dependencies":{"left-pad":"1.3.0"}}');
    fs.writeFileSync(path.join(dir, 'package-lock.json'), lock);
    return dir;
  }

  it('hands an installed node_modules to a later build with the same lock file and tenant, as hard links', async () => {
    const first = app('{"lockfileVersion":3,"v":1}');
    fs.mkdirSync(path.join(first, 'node_modules', 'left-pad'), { recursive: true });
    fs.writeFileSync(path.join(first, 'node_modules', 'left-pad', 'index.js'), 'module.exports = 1;');
    const key = dependencyCacheKey(first, 'npm ci', 'tenant-a') as string;
    await saveDependencies(cacheRoot, key, first);

    const second = app('{"lockfileVersion":3,"v":1}');
    expect(dependencyCacheKey(second, 'npm ci', 'tenant-a')).toBe(key);
    expect(await restoreDependencies(cacheRoot, key, second)).toBe(true);
    const restored = path.join(second, 'node_modules', 'left-pad', 'index.js');
    expect(fs.readFileSync(restored, 'utf8')).toBe('module.exports = 1;');
    expect(fs.statSync(restored).ino).toBe(fs.statSync(path.join(first, 'node_modules', 'left-pad', 'index.js')).ino);
  });

  it('gives another tenant, another lock file or no lock file a different key or none', () => {
    const dir = app('{"lockfileVersion":3,"v":1}');
    const key = dependencyCacheKey(dir, 'npm ci', 'tenant-a');
    expect(dependencyCacheKey(dir, 'npm ci', 'tenant-b')).not.toBe(key);
    expect(dependencyCacheKey(app('{"lockfileVersion":3,"v":2}'), 'npm ci', 'tenant-a')).not.toBe(key);
    fs.rmSync(path.join(dir, 'package-lock.json'));
    expect(dependencyCacheKey(dir, 'npm ci', 'tenant-a')).toBeNull();
  });

  it('restores nothing when nothing was saved for the key', async () => {
    const dir = app('{"lockfileVersion":3,"v":3}');
    expect(await restoreDependencies(cacheRoot, dependencyCacheKey(dir, 'npm ci', 't') as string, dir)).toBe(false);
    expect(fs.existsSync(path.join(dir, 'node_modules'))).toBe(false);
  });
});
