/**
 * Starts `podman system service` on a unix socket graphx owns, so the Docker Engine API client (dockerode) has an
 * engine to talk to on machines with podman and no Docker daemon. The service runs with graphx's own engine
 * configuration (engineConfig.ts) and never on a TCP port: only processes that can open the socket file (mode 0600
 * in a 0700 directory) reach it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { EngineConfigFiles } from './engineConfig';
import { unmountStore } from './storeMounts';
import { isProcessAlive } from '@graphx/kit/os/processes';

export interface PodmanService {
  socketPath: string;
  /** True when the service was already running (started by an earlier process on this data dir). */
  adopted: boolean;
  /**
   * Stops the service when this process started it, or when it was adopted and `takeOver` was asked (a stack that
   * replaces a dead predecessor owns its engine); then unmounts what the service left in its store (storeMounts.ts).
   * A reused service of a `graphx worker` is left running.
   */
  stop: () => Promise<void>;
}

export interface PodmanServiceOptions {
  timeoutMs?: number;
  /** Stop an adopted service too (see PodmanService.stop). */
  takeOver?: boolean;
}

/** sockaddr_un holds 108 bytes; a deep data dir falls back to a short path derived from it. */
const MAX_SOCKET_PATH = 100;

/** Where the engine socket for these engine files lives. */
export function engineSocketPath(files: EngineConfigFiles): string {
  const preferred = path.join(files.dir, 'engine.sock');
  if (preferred.length <= MAX_SOCKET_PATH) return preferred;
  const digest = crypto.createHash('sha256').update(files.dir).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `graphx-engine-${digest}.sock`);
}

/** True when a Docker Engine API answers `GET /_ping` on the unix socket. */
export function pingSocket(socketPath: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ socketPath, path: '/_ping', timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/**
 * Ensures a podman API service answers on this data dir's socket: reuses one left by an earlier process (a worker
 * restarted after SIGKILL finds its containers through it), else starts one and waits until it answers.
 * @throws Error naming podman when it is not installed or does not answer within `timeoutMs`.
 */
export async function ensurePodmanService(files: EngineConfigFiles, options: PodmanServiceOptions = {}): Promise<PodmanService> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const socketPath = engineSocketPath(files);
  const pidFile = path.join(files.dir, 'engine.pid');
  const release = () => {
    fs.rmSync(pidFile, { force: true });
    unmountStore(files.storeDir, files.storageConf);
  };
  if (await pingSocket(socketPath)) {
    const stop = async () => {
      if (!options.takeOver) return;
      const pid = recordedServicePid(pidFile, socketPath);
      if (pid) await stopPid(pid);
      release();
    };
    return { socketPath, adopted: true, stop };
  }
  fs.rmSync(socketPath, { force: true });
  // Its log goes to a file, not a pipe: the service outlives this process, and a closed pipe would kill it (SIGPIPE).
  const logFile = path.join(files.dir, 'engine.log');
  const log = fs.openSync(logFile, 'a', 0o600);
  const child = spawn('podman', ['system', 'service', '--time=0', `unix://${socketPath}`], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...files.env },
    stdio: ['ignore', log, log],
    // The service outlives the command that started it and its containers' runtimes inherit its working directory:
    // run it in its own directory, not in a checkout that may be deleted (runc then fails with "broken pipe").
    cwd: path.dirname(socketPath),
    // Its own process group: a Ctrl-C on the terminal reaches graphx, which stops the service in order.
    detached: true,
  });
  fs.closeSync(log);
  const exited = new Promise<Error>((resolve) => {
    child.once('error', (error) => resolve(new Error(`cannot start podman: ${error.message}`)));
    child.once('exit', (code) => resolve(new Error(`podman system service exited (${code}): ${tail(logFile)}`)));
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = await Promise.race([exited, delay(100).then(() => null)]);
    if (failure) throw failure;
    if (fs.existsSync(socketPath) && (await pingSocket(socketPath))) break;
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`podman system service did not answer on ${socketPath} within ${timeoutMs} ms`);
    }
  }
  fs.chmodSync(socketPath, 0o600);
  if (child.pid) fs.writeFileSync(pidFile, String(child.pid), { mode: 0o600 });
  child.unref();
  return {
    socketPath,
    adopted: false,
    stop: async () => {
      await stopChild(child);
      release();
    },
  };
}

/** The pid recorded in `pidFile` when it is still the podman service on `socketPath` (not a reused pid), else null. */
function recordedServicePid(pidFile: string, socketPath: string): number | null {
  try {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return pid > 0 && cmdline.includes('podman') && cmdline.includes(socketPath) ? pid : null;
  } catch {
    return null;
  }
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
async function stopPid(pid: number): Promise<void> {
  const alive = () => isProcessAlive(pid);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5000;
  while (alive() && Date.now() < deadline) await delay(50);
  if (alive()) process.kill(pid, 'SIGKILL');
  while (alive() && Date.now() < deadline + 2000) await delay(50);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    return '';
  }
}
