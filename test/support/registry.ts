/**
 * A real image registry on loopback for tests: Debian's `docker-registry` (docker/distribution) on a free port of
 * 127.0.0.1, plain HTTP, storing under the test run's directory; optionally behind htpasswd basic auth (bcrypt
 * hashed by python3's crypt module, Debian's python3 has it). Images get there with `podman push` on the test
 * engine's own store (the same graphx engine configuration, so the loopback registry is an insecure one).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { findFreePort, waitFor } from '@graphx/kit/net/ports';
import type { EngineConfigFiles } from '../../src/containers/engineConfig';
import { testEnv } from './env';

export interface TestRegistry {
  /** `127.0.0.1:<port>`: the host part of image references in it. */
  host: string;
  /** The credentials it requires, or null for a public one. */
  credentials: { username: string; password: string } | null;
  /** Pushes a local image of the engine's store to `<host>/<name>`; returns that reference. */
  push: (files: EngineConfigFiles, localRef: string, name: string) => string;
  stop: () => Promise<void>;
}

/** Starts a registry; `withAuth` makes it require a generated user and password. */
export async function startRegistry(withAuth: boolean): Promise<TestRegistry> {
  const dir = path.join(testEnv.runDir(), `registry-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const credentials = withAuth ? { username: 'puller', password: crypto.randomBytes(12).toString('hex') } : null;
  if (credentials) fs.writeFileSync(path.join(dir, 'htpasswd'), `${credentials.username}:${bcrypt(credentials.password)}\n`);
  // A port found free can be taken before the registry binds it: try a few.
  for (let attempt = 0; ; attempt += 1) {
    const port = await findFreePort();
    const child = startProcess(dir, port, credentials !== null);
    try {
      await waitFor(`docker-registry on port ${port}`, () => answers(port, child), 10_000, 50);
      const host = `127.0.0.1:${port}`;
      return {
        host,
        credentials,
        push: (files, localRef, name) => {
          const target = `${host}/${name}`;
          const auth = credentials ? ['--creds', `${credentials.username}:${credentials.password}`] : [];
          execFileSync('podman', ['push', '--quiet', '--tls-verify=false', ...auth, localRef, target], {
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...files.env },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          return target;
        },
        stop: () => stopProcess(child),
      };
    } catch (error) {
      await stopProcess(child);
      if (attempt >= 3) throw error;
    }
  }
}

function startProcess(dir: string, port: number, withAuth: boolean): ChildProcess {
  const config = path.join(dir, `config-${port}.yml`);
  fs.writeFileSync(
    config,
    [
      'version: 0.1',
      'log: { level: error }',
      `storage: { filesystem: { rootdirectory: ${JSON.stringify(path.join(dir, 'data'))} }, delete: { enabled: true } }`,
      `http: { addr: "127.0.0.1:${port}" }`,
      ...(withAuth ? [`auth: { htpasswd: { realm: graphx-test, path: ${JSON.stringify(path.join(dir, 'htpasswd'))} } }`] : []),
      '',
    ].join('\n'),
  );
  const child = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.resume();
  return child;
}

/** True once `GET /v2/` answers (200 public, 401 behind auth); throws when the process died. */
async function answers(port: number, child: ChildProcess): Promise<boolean> {
  if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}`);
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/v2/', timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200 || response.statusCode === 401);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

/** A bcrypt hash (`$2b$`), the only scheme docker-registry's htpasswd accepts. */
function bcrypt(password: string): string {
  return execFileSync(
    '/usr/bin/python3',
    [
      '-W',
      'ignore',
      '-c',
      'import crypt,sys; print(crypt.crypt(sys.stdin.read(), crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))',
    ],
    { input: password, encoding: 'utf8' },
  ).trim();
}
