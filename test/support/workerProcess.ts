/**
 * `graphx worker` as its own process beside a test stack started without one (startPipelineStack({ worker: false })):
 * the crash tests SIGKILL it and start another, as an operator's supervisor would.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { testEnv } from './env';
import type { PipelineStack } from './pipelineStack';

const root = path.resolve(__dirname, '..', '..');

/**
 * Starts a worker sharing the stack's database, Temporal, data dir and secret key. `env` adds to (or overrides) that
 * environment: GRAPHX_RUNNER and, for containers, GRAPHX_CONTAINER_SOCKET; GRAPHX_WORKER_QUEUES for a split worker.
 */
export function startWorkerProcess(pipeline: PipelineStack, env: Record<string, string>): ChildProcess {
  const workerEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: testEnv.databaseUrl(),
    TEMPORAL_ADDRESS: testEnv.temporalAddress(),
    GRAPHX_DATA_DIR: pipeline.dataDir,
    GRAPHX_SECRET_KEY: pipeline.config.secretKey as string,
    GRAPHX_TASK_QUEUE_PREFIX: pipeline.config.taskQueuePrefix,
    GRAPHX_PUBLIC_URL: pipeline.stack.apiUrl,
    GRAPHX_GATEWAY_PORT: pipeline.stack.gatewayUrl ? new URL(pipeline.stack.gatewayUrl).port : '0',
    GRAPHX_ALLOW_FILE_REPOS: '1',
    GRAPHX_BUILD_TIMEOUT_SECONDS: String(pipeline.config.buildTimeoutSeconds),
    GRAPHX_LOG_LEVEL: 'warn',
    GRAPHX_WORKER_METRICS_PORT: '0',
    ...env,
  };
  return spawn(process.execPath, [path.join(root, 'bin', 'graphx.js'), 'worker'], {
    cwd: root,
    env: workerEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGKILL, resolved once the process is gone. */
export async function killWorkerProcess(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGKILL');
  await exited;
}

/** Command lines of this machine's processes that mention `text` (container processes included: one PID space). */
export function processesMentioning(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', text], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line && !line.includes('pgrep'));
  } catch {
    return [];
  }
}
