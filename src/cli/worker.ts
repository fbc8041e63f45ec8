/**
 * `graphx worker`: one worker alone, against an external PostgreSQL and Temporal. Deployed apps outlive it: on exit it
 * leaves the instances it supervises running (they are detached process groups), and on start it adopts the live
 * ones and restarts the dead ones of every deployment with an active revision, so replacing a worker never takes an
 * app down. `graphx start`, a developer's foreground stack, stops its apps with it instead.
 */
import fs from 'node:fs';
import { loadConfig } from '../config';
import { ConfigError } from '@graphx/kit/errors';
import { createDb } from '../db/knex';
import { applyLogLevel, logger } from '@graphx/kit/logger';
import { loadSecretKey, SecretBox } from '../security/secretBox';
import { chooseTarget } from '../targets/choose';
import { startWorker } from '../worker';

export interface WorkerCommandOptions {
  /** Written with the metrics URL once the worker polls (how `graphx start` knows its worker is up). */
  readyFile?: string;
  /** The `graphx start` that runs this worker: when it is gone, this worker shuts down too. */
  stackPid?: string;
}

export async function runWorkerCommand(options: WorkerCommandOptions = {}): Promise<void> {
  const config = loadConfig();
  applyLogLevel(config);
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL must be set for `graphx worker` (it does not start PostgreSQL).');
  if (!config.temporalAddress)
    throw new ConfigError('TEMPORAL_ADDRESS must be set for `graphx worker` (it does not start Temporal).');
  const db = createDb(config.databaseUrl);
  const secretBox = new SecretBox(loadSecretKey(config.secretKey, config.dataDir));
  // Container runner: revisions are built into images (and image sources pulled) in the engine.
  const chosen = await chooseTarget(config, db, secretBox, { builds: true });
  const { target, builder } = chosen;
  const worker = await startWorker({
    temporalAddress: config.temporalAddress,
    namespace: config.temporalNamespace,
    deps: { config, db, secretBox, target, builder },
    queues: config.workerQueues,
    metrics: { host: config.host, port: config.workerMetricsPort },
  });
  // Only a worker that rolls out (control queue) supervises apps.
  if (config.workerQueues.includes('control')) await target.restoreActiveInstances();
  logger.info({ temporal: config.temporalAddress, metrics: worker.metricsUrl }, 'worker running');
  if (options.readyFile) fs.writeFileSync(options.readyFile, worker.metricsUrl ?? '');
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await worker.shutdown();
    await chosen.closeEngine();
    await db.destroy();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  // A stack's worker does not outlive its stack (SIGKILLed, it cannot stop us): its next start takes over the apps.
  if (options.stackPid) {
    setInterval(() => {
      if (process.ppid !== Number(options.stackPid)) void shutdown();
    }, 500).unref();
  }
}
