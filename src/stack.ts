/**
 * The whole service in one process: PostgreSQL (embedded unless DATABASE_URL), Temporal (dev server unless
 * TEMPORAL_ADDRESS), the API, an in-process worker, the outbox relay and the gateway. `stop()` stops every child.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { createApp } from './api/app';
import type { GraphxConfig } from './config';
import { createDb, migrateToLatest, type Db } from './db/knex';
import { startEmbeddedPostgres } from './db/embeddedPostgres';
import { ensureBootstrapApiKey } from './bootstrap';
import { logger } from './logger';
import { startOutboxRelay } from './pipeline/outbox';
import { loadSecretKey, SecretBox } from './security/secretBox';
import { LocalTarget } from './targets/local';
import { createTemporalClient } from './temporal/client';
import { startTemporalDevServer } from './temporal/devServer';
import { startWorker } from './worker';

export interface StackHandle {
  apiUrl: string;
  gatewayUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  apiKeyFile: string;
  createdApiKey: string | null;
  databaseUrl: string;
  db: Db;
  temporal: Client;
  stop: () => Promise<void>;
}

export interface StackOptions {
  /** Run the in-process worker (default true). */
  worker?: boolean;
  workflowBundlePath?: string;
}

/** Starts every part in order; if one fails, stops the ones already started and rethrows. */
export async function startStack(config: GraphxConfig, options: StackOptions = {}): Promise<StackHandle> {
  const stops: Array<[string, () => Promise<void>]> = [];
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
      databaseUrl = pg.connectionString('graphx');
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
      });
      stops.push(['temporal', devServer.stop]);
      temporalAddress = devServer.address;
      temporalUiUrl = devServer.uiUrl;
    }
    const temporal = await createTemporalClient(temporalAddress, config.temporalNamespace);
    stops.push(['temporal client', () => temporal.connection.close()]);

    const target = new LocalTarget({ config, db, secretBox });
    stops.push(['app instances', () => target.stopAll()]);
    const closeGateway = await target.startGateway();
    stops.push(['gateway', closeGateway]);

    if (options.worker !== false) {
      const worker = await startWorker({
        temporalAddress,
        namespace: config.temporalNamespace,
        deps: { config, db, secretBox, target },
        workflowBundlePath: options.workflowBundlePath,
        queues: config.workerQueues,
      });
      stops.push(['worker', worker.shutdown]);
    }
    const relay = startOutboxRelay(db, temporal);
    stops.push(['outbox relay', relay.stop]);

    const app = createApp({ config, db, secretBox, temporal });
    const server = http.createServer(app.callback());
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
      apiKeyFile: bootstrap.apiKeyFile,
      createdApiKey: bootstrap.createdKey,
      databaseUrl,
      db,
      temporal,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
