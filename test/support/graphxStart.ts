/**
 * `graphx start` as a user runs it, for the tests that crash and stop its processes: the stack with its own PostgreSQL
 * and Temporal dev server (process runner) on fixed free ports, the pids it records in `<data>/run`, and the processes
 * of a data dir as /proc shows them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findFreePort } from '@graphx/kit/net/ports';
import { isProcessAlive } from '@graphx/kit/os/processes';

const root = path.resolve(__dirname, '..', '..');

export interface StartedStack {
  child: ChildProcess;
  output: () => string;
  api: string;
  key: string;
}

/** Polls `check` every 100 ms until it is true (→ true) or `timeoutMs` passed (→ false). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Free ports for the API, the gateway, Temporal and its UI, and the worker's metrics: the same across restarts. */
export async function stackPorts(): Promise<Record<string, string>> {
  const ports: Record<string, string> = {};
  for (const name of [
    'PORT',
    'GRAPHX_GATEWAY_PORT',
    'GRAPHX_TEMPORAL_PORT',
    'GRAPHX_TEMPORAL_UI_PORT',
    'GRAPHX_WORKER_METRICS_PORT',
  ])
    ports[name] = String(await findFreePort());
  return ports;
}

/** `graphx start` on `dataDir` (process runner); resolves once it prints that it serves. */
export async function graphxStart(dataDir: string, ports: Record<string, string>): Promise<StartedStack> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'graphx.js'), 'start'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GRAPHX_DATA_DIR: dataDir, GRAPHX_RUNNER: 'process', ...ports },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  await until(() => output.includes('Press Ctrl-C to stop.') || child.exitCode !== null, 180_000);
  if (!output.includes('Press Ctrl-C to stop.')) throw new Error(`graphx start did not start:\n${output}`);
  const key = fs.readFileSync(path.join(dataDir, 'api-key'), 'utf8').trim();
  return { child, output: () => output, api: `http://127.0.0.1:${ports.PORT}`, key };
}

/** The pid `graphx start` recorded for one of its processes. */
export function recordedPid(dataDir: string, role: 'stack' | 'postgres' | 'temporal' | 'worker'): number {
  return (JSON.parse(fs.readFileSync(path.join(dataDir, 'run', `${role}.json`), 'utf8')) as { pid: number }).pid;
}

function liveProcesses(matches: (environ: string[], cmdline: string) => boolean): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((pid) => {
      try {
        const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        // A zombie is dead already (its parent has not reaped it yet).
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z' && matches(environ, cmdline);
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter((pid) => isProcessAlive(pid));
}

/** Live app instances of a deployment: the processes whose environment names it. */
export function instancesOf(deploymentId: string): number[] {
  return liveProcesses((environ) => environ.includes(`GRAPHX_DEPLOYMENT_ID=${deploymentId}`));
}

/**
 * Every live process of a data dir: the stack's own (they carry GRAPHX_DATA_DIR), the process runner's apps (their
 * graphx.json is under `<dataDir>/builds`) and anything whose command line names the data dir.
 */
export function processesOfDataDir(dataDir: string): number[] {
  const marks = [`GRAPHX_DATA_DIR=${dataDir}`, `GRAPHX_CONFIG_PATH=${path.join(dataDir, 'builds')}${path.sep}`];
  return liveProcesses(
    (environ, cmdline) =>
      environ.some((entry) => marks.some((mark) => entry.startsWith(mark))) || cmdline.includes(`${dataDir}/`),
  );
}

/** An authenticated JSON call to the stack's API. */
export async function apiCall(stack: StartedStack, method: string, urlPath: string, body?: unknown) {
  const response = await fetch(`${stack.api}${urlPath}`, {
    method,
    headers: { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}
