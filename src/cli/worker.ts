/**
 * `graphx worker`: one worker alone, against an external PostgreSQL and Temporal. Deployed apps outlive it: on exit it
 * leaves the instances it supervises running (they are detached process groups), and on start it adopts the live
 * ones and restarts the dead ones of every deployment with an active revision, so replacing a worker never takes an
 * app down. `graphx start`, a developer's foreground stack, stops its apps with it instead.
 */
import { loadConfig } from '../config';
import { ConfigError } from '@graphx/kit/errors';
import { openRevisionImages } from '../containers';
import { createDb } from '../db/knex';
import { applyLogLevel, logger } from '@graphx/kit/logger';
import { loadSecretKey, SecretBox } from '../security/secretBox';
import { chooseTarget } from '../targets/choose';
import { startWorker } from '../worker';

export async function runWorkerCommand(): Promise<void> {
  const config = loadConfig();
  applyLogLevel(config);
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL must be set for `graphx worker` (it does not start PostgreSQL).');
  if (!config.temporalAddress)
    throw new ConfigError('TEMPORAL_ADDRESS must be set for `graphx worker` (it does not start Temporal).');
  const db = createDb(config.databaseUrl);
  const secretBox = new SecretBox(loadSecretKey(config.secretKey, config.dataDir));
  const chosen = await chooseTarget(config, db, secretBox);
  const { target } = chosen;
  // Container runner: revisions are built into images (and image sources pulled) in the engine.
  const images = chosen.engine ? await openRevisionImages(chosen.engine, config, (line) => logger.info(line)) : undefined;
  const worker = await startWorker({
    temporalAddress: config.temporalAddress,
    namespace: config.temporalNamespace,
    deps: { config, db, secretBox, target, images },
    queues: config.workerQueues,
    metrics: { host: config.host, port: config.workerMetricsPort },
  });
  // Only a worker that rolls out (control queue) supervises apps.
  if (config.workerQueues.includes('control')) await target.restoreActiveInstances();
  logger.info({ temporal: config.temporalAddress, metrics: worker.metricsUrl }, 'worker running');
  const shutdown = async () => {
    await worker.shutdown();
    await chosen.closeEngine();
    await db.destroy();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
}
