/**
 * Several runtime processes behind one port (`GRAPHX_RUNTIME_WORKERS`, default 1), with `node:cluster`. A run's CPU is
 * mostly the graph library's own (about 3/4, docs/decisions.md "Runtime throughput"), and one Node process uses one
 * core, so throughput beyond one core needs processes. Each worker is a whole runtime (its own pool, recorder and
 * shipper); they already agree through the database exactly as several instances of one revision do. The primary only
 * forks, replaces a worker that died, and forwards SIGTERM/SIGINT so all of them drain before it exits.
 */
import cluster, { type Worker } from 'node:cluster';
import { logger } from '@graphx/kit/logger';

const RESTART_DELAY_MS = 1_000;

/** True in the process that should serve (a worker, or the only process when there is one worker). */
export function servesHere(workers: number): boolean {
  return workers <= 1 || cluster.isWorker;
}

/**
 * Forks `count` workers (each re-runs this command with `env` added) and supervises them until a signal; resolves
 * with the exit code the primary should use once every worker has exited.
 */
export function superviseWorkers(count: number, env: Record<string, string>): Promise<number> {
  let stopping = false;
  let failed = false;
  const live = new Set<Worker>();
  const fork = () => {
    const worker = cluster.fork(env);
    live.add(worker);
    worker.once('exit', (code, signal) => {
      live.delete(worker);
      if (stopping) {
        if (code !== 0) failed = true;
        return;
      }
      logger.warn({ pid: worker.process.pid, code, signal }, 'runtime worker exited; starting another');
      setTimeout(() => stopping || fork(), RESTART_DELAY_MS).unref();
    });
  };
  for (let index = 0; index < count; index += 1) fork();
  return new Promise((resolve) => {
    const onSignal = () => {
      if (stopping) return;
      stopping = true;
      if (live.size === 0) return resolve(failed ? 1 : 0);
      // A terminal's SIGINT reaches the workers too; they ignore the second signal while stopping.
      for (const worker of live) worker.process.kill('SIGTERM');
      cluster.on('exit', () => live.size === 0 && resolve(failed ? 1 : 0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
}
