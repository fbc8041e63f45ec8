/**
 * The whole service in one process: PostgreSQL (embedded unless DATABASE_URL), Temporal (dev server unless
 * TEMPORAL_ADDRESS), the API, an in-process worker, the outbox relay and the gateway. `stop()` stops every child.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { createApp } from './api/app';
import { answerClientErrorsWithJson } from '@graphx/kit/http/clientErrors';
import type { GraphxConfig } from './config';
import { openRevisionImages } from './containers';
import { createDb, migrateToLatest, type Db } from './db/knex';
import { startEmbeddedPostgres } from '@graphx/kit/os/embeddedPostgres';
import { ensureBootstrapApiKey } from './bootstrap';
import { logger } from '@graphx/kit/logger';
import { killOwnedGroups } from '@graphx/kit/os/ownedGroups';
import { startOutboxRelay } from './pipeline/outbox';
import { closeMaintenanceDatabases } from './pipeline/deploymentDatabase';
import { loadSecretKey, SecretBox } from './security/secretBox';
import { chooseTarget } from './targets/choose';
import { delay } from '@graphx/kit/os/processes';
import { createTemporalClient } from './temporal/client';
import { startTemporalDevServer } from './temporal/devServer';
import { startWorker } from './worker';

export interface StackHandle {
  apiUrl: string;
  gatewayUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  /** The in-process worker's /metrics, /ready and /ok server (null without a worker). */
  workerMetricsUrl: string | null;
  apiKeyFile: string;
  createdApiKey: string | null;
  databaseUrl: string;
  db: Db;
  temporal: Client;
  /** Ordered stop: API, relay, worker, apps (draining ones too), gateway, Temporal, PostgreSQL last. */
  stop: () => Promise<void>;
  /** SIGKILL to every process the stack started (apps, builds, Temporal, PostgreSQL), at once. */
  kill: () => void;
}

export interface StackOptions {
  /** Run the in-process worker (default true). */
  worker?: boolean;
  workflowBundlePath?: string;
}

const WORKER_STOP_MS = 8_000;
const APP_STOP_GRACE_MS = 8_000;

/** Starts every part in order; if one fails, stops the ones already started and rethrows. */
export async function startStack(config: GraphxConfig, options: StackOptions = {}): Promise<StackHandle> {
  const stops: Array<[string, () => Promise<void>]> = [];
  const kills: Array<() => void> = [killOwnedGroups];
  const stopAll = async () => {
    for (const [name, stop] of stops.reverse()) {
      try {
        await stop();
      } catch (error) {
        logger.warn({ err: error, part: name }, 'error while stopping');
      }
    }
    stops.length = 0;
  };
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });

    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres(config.dataDir);
      stops.push(['postgres', pg.stop]);
      kills.push(pg.kill);
      databaseUrl = pg.connectionString('graphx');
      await closeMaintenanceDatabases(pg.connectionString('postgres'));
    }
    const db = createDb(databaseUrl);
    stops.push(['db pool', () => db.destroy()]);
    await migrateToLatest(db);
    const bootstrap = await ensureBootstrapApiKey(db, config.dataDir, config.bootstrapApiKey);
    const secretBox = new SecretBox(loadSecretKey(config.secretKey, config.dataDir));

    let temporalAddress = config.temporalAddress;
    let temporalUiUrl: string | null = null;
    if (!temporalAddress) {
      const devServer = await startTemporalDevServer({
        dbFile: path.join(config.dataDir, 'temporal.sqlite'),
        port: config.temporalPort,
        uiPort: config.temporalUiPort,
        namespace: config.temporalNamespace,
        cliPath: config.temporalCli,
        logFile: path.join(config.dataDir, 'temporal.log'),
        env: { GRAPHX_DATA_DIR: config.dataDir },
      });
      stops.push(['temporal', devServer.stop]);
      kills.push(devServer.kill);
      temporalAddress = devServer.address;
      temporalUiUrl = devServer.uiUrl;
    }
    const temporal = await createTemporalClient(temporalAddress, config.temporalNamespace, config);
    stops.push(['temporal client', () => temporal.connection.close()]);

    const { target, engine, closeEngine } = await chooseTarget(config, db, secretBox);
    stops.push(['container engine', closeEngine]);
    stops.push(['app instances', () => target.stopAll(APP_STOP_GRACE_MS)]);
    const closeGateway = await target.startGateway();
    stops.push(['gateway', closeGateway]);

    let workerMetricsUrl: string | null = null;
    if (options.worker !== false) {
      // Container runner: revisions are built into images (and image sources pulled) in the engine.
      const images = engine ? await openRevisionImages(engine, config, (line) => logger.info(line)) : undefined;
      const worker = await startWorker({
        temporalAddress,
        namespace: config.temporalNamespace,
        deps: { config, db, secretBox, target, images },
        workflowBundlePath: options.workflowBundlePath,
        queues: config.workerQueues,
        metrics: { host: config.host, port: config.workerMetricsPort },
      });
      // Shutting down cancels the activities (a rollout stops its new instances); one slow to notice is not waited
      // for past WORKER_STOP_MS: the app instances are stopped next either way.
      stops.push(['worker', () => Promise.race([worker.shutdown(), delay(WORKER_STOP_MS)])]);
      workerMetricsUrl = worker.metricsUrl;
    }
    const relay = startOutboxRelay(db, temporal);
    stops.push(['outbox relay', relay.stop]);

    const app = createApp({ config, db, secretBox, temporal, temporalUiUrl: temporalUiUrl ?? config.temporalUiUrl });
    const server = http.createServer(app.callback());
    answerClientErrorsWithJson(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, resolve);
    });
    stops.push(['api', () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()))]);
    const address = server.address();
    const apiPort = typeof address === 'object' && address ? address.port : config.port;
    target.setControlPlaneUrl(`http://${config.host}:${apiPort}`);

    await target.restoreActiveInstances();

    return {
      apiUrl: `http://${config.host}:${apiPort}`,
      gatewayUrl: target.gatewayUrl(),
      temporalAddress,
      temporalUiUrl,
      workerMetricsUrl,
      apiKeyFile: bootstrap.apiKeyFile,
      createdApiKey: bootstrap.createdKey,
      databaseUrl,
      db,
      temporal,
      stop: stopAll,
      kill: () => kills.forEach((kill) => kill()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
