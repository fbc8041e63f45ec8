/**
 * The embedded stack's worker as a process of its own (`graphx worker`, supervised by `graphx start`). In one process
 * with the API and the gateway, a worker that stopped (SIGSTOP, a debugger, a long synchronous step) froze both: GETs
 * failed for as long. Apart, the API and the gateway answer whatever the worker does; the worker reads the stack's own
 * settings (a config file written from the stack's configuration), reaches the stack's PostgreSQL and Temporal, uses
 * the engine the stack opened, and ends itself when the stack's process is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { configVariables, projectRoot, type GraphxConfig } from '../config';
import { StopWaiting, waitFor } from '@graphx/kit/net/ports';
import { startSupervisedChild } from '@graphx/kit/os/supervisedChild';
import { recordProcess } from '@graphx/kit/os/processRecords';

export interface WorkerChildOptions {
  config: GraphxConfig;
  databaseUrl: string;
  temporalAddress: string;
  /** The runner the stack chose (its check ran there): the worker uses the same, on the same engine. */
  runner: 'container' | 'process' | 'kubernetes';
  containerSocket: string | null;
  gatewayPort: number;
  apiUrl: string;
}

export interface WorkerChild {
  /** The worker's /metrics, /ready and /ok server. */
  metricsUrl: string | null;
  pid: () => number | undefined;
  /** SIGTERM (the worker shuts down; the apps it supervises keep running), SIGKILL after `graceMs`. */
  stop: (graceMs?: number) => Promise<void>;
  kill: () => void;
}

/** Starts the worker process and resolves once it polls its task queues; it is restarted if it dies. */
export async function startWorkerChild(options: WorkerChildOptions): Promise<WorkerChild> {
  const { config } = options;
  const runDir = path.join(config.dataDir, 'run');
  fs.mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const configFile = path.join(runDir, 'worker-config.json');
  const readyFile = path.join(runDir, 'worker.ready');
  const settings: Record<string, string> = {
    ...config.settings,
    GRAPHX_DATA_DIR: config.dataDir,
    DATABASE_URL: options.databaseUrl,
    TEMPORAL_ADDRESS: options.temporalAddress,
    GRAPHX_RUNNER: options.runner,
    // GRAPHX_TARGET names the same choice: the runner decided here is the one the worker uses.
    GRAPHX_TARGET: options.runner,
    GRAPHX_GATEWAY_PORT: String(options.gatewayPort),
    GRAPHX_INTERNAL_API_URL: options.apiUrl,
    ...(options.containerSocket ? { GRAPHX_CONTAINER_SOCKET: options.containerSocket } : {}),
  };
  // It holds the database URL and maybe the secret key: readable by this user only, like the data dir's key file.
  fs.writeFileSync(configFile, JSON.stringify(settings, null, 2), { mode: 0o600 });
  // The environment is ours minus every setting, so the file decides them (the environment would win over it).
  const env: NodeJS.ProcessEnv = { ...process.env, GRAPHX_CONFIG_FILE: configFile };
  for (const name of configVariables()) if (name !== 'GRAPHX_CONFIG_FILE') delete env[name];

  const child = await startSupervisedChild({
    name: 'the worker',
    command: process.execPath,
    args: [path.join(projectRoot, 'bin', 'graphx.js'), 'worker', '--ready-file', readyFile, '--stack-pid', String(process.pid)],
    spawnOptions: { env, cwd: projectRoot },
    inheritOutput: true,
    stopSignal: 'SIGTERM',
    onLaunch: (pid) => {
      fs.rmSync(readyFile, { force: true });
      recordProcess(config.dataDir, 'worker', pid);
    },
    waitReady: (_child, exited) =>
      waitFor(
        'the worker to poll its task queues',
        async () => {
          if (exited()) throw new StopWaiting('the worker exited at start-up (its output is above)');
          return fs.existsSync(readyFile);
        },
        300_000,
        100,
      ),
  });
  const metricsUrl = fs.readFileSync(readyFile, 'utf8').trim() || null;
  return { metricsUrl, pid: child.pid, stop: (graceMs = 10_000) => child.stop(graceMs), kill: child.kill };
}
