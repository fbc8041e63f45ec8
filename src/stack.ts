/**
 * The whole service: PostgreSQL (embedded unless DATABASE_URL), Temporal (dev server unless TEMPORAL_ADDRESS), the
 * API, the outbox relay, the gateway (none on Kubernetes, where each deployment has its own route) and a worker, in this process or (`worker: 'process'`, what `graphx start` runs)
 * as a supervised `graphx worker` of its own, so a stuck worker never stops the API and the gateway from answering.
 * `stop()` stops every part, the apps included.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { createApp } from './api/app';
import { answerClientErrorsWithJson } from '@graphx/kit/http/clientErrors';
import type { GraphxConfig } from './config';
import { createDb, migrateToLatest, type Db } from './db/knex';
import { embeddedClusterDir, startEmbeddedPostgres } from '@graphx/kit/os/embeddedPostgres';
import { ensureBootstrapApiKey } from './bootstrap';
import { flushLogs, logger } from '@graphx/kit/logger';
import { killOwnedGroups } from '@graphx/kit/os/ownedGroups';
import { startOutboxRelay } from './pipeline/outbox';
import { closeMaintenanceDatabases } from './pipeline/deploymentDatabase';
import { loadSecretKey, SecretBox } from './security/secretBox';
import { chooseTarget } from './targets/choose';
import { delay } from '@graphx/kit/os/processes';
import { createTemporalClient } from './temporal/client';
import { startTemporalDevServer } from './temporal/devServer';
import { startWorker } from './worker';
import { startWorkerChild } from './worker/child';
import {
  forgetProcess,
  killDataDirProcesses,
  recordProcess,
  takeOverDataDir,
  type RecordedRole,
} from '@graphx/kit/os/processRecords';

export interface StackHandle {
  apiUrl: string;
  /** The gateway in front of the apps; null on Kubernetes (gateway-less: each deployment's URL is its own route). */
  gatewayUrl: string | null;
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
  /** The worker: in this process (true, the default), none (false), or a supervised child process ('process'). */
  worker?: boolean | 'process';
  workflowBundlePath?: string;
  /**
   * Own the data dir (`graphx start`): refuse a live predecessor, end what a dead one left (processRecords.ts), and
   * record this stack's processes for the next start.
   */
  takeOver?: boolean;
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
    // Last: the lines of the stop itself are out once it resolves, the process exiting or not.
    await flushLogs();
  };
  const record = (role: RecordedRole) => (pid: number | undefined) => {
    if (options.takeOver) recordProcess(config.dataDir, role, pid);
  };
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });
    if (options.takeOver) {
      const ended = await takeOverDataDir(config.dataDir, config.databaseUrl ? null : embeddedClusterDir(config.dataDir));
      if (ended.length > 0) {
        logger.warn({ ended }, 'a graphx start on this data dir ended without stopping; ended what it left running');
      }
      stops.push(['process records', async () => forgetProcess(config.dataDir, 'stack')]);
      kills.push(() => killDataDirProcesses(config.dataDir));
    }

    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres(config.dataDir, 'graphx', { onLaunch: record('postgres') });
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
        onLaunch: record('temporal'),
      });
      stops.push(['temporal', devServer.stop]);
      kills.push(devServer.kill);
      temporalAddress = devServer.address;
      temporalUiUrl = devServer.uiUrl;
    }
    const temporal = await createTemporalClient(temporalAddress, config.temporalNamespace, config);
    stops.push(['temporal client', () => temporal.connection.close()]);

    // GRAPHX_WORKER_QUEUES empty: the API alone (its workers run elsewhere, as deploy/kubernetes runs them).
    const wantsWorker = options.worker !== false && config.workerQueues.length > 0;
    const childWorker = wantsWorker && options.worker === 'process';
    const inProcessWorker = wantsWorker && !childWorker;
    const chosen = await chooseTarget(config, db, secretBox, {
      builds: wantsWorker,
      takeOverEngine: true,
    });
    const { target } = chosen;
    // Apps on this machine sit behind the gateway; on Kubernetes each has its own route and outlives the stack.
    const onThisMachine = chosen.runner === 'kubernetes' ? null : chosen.target;
    stops.push(['container engine', chosen.closeEngine]);
    if (onThisMachine) {
      const closeGateway = await onThisMachine.startGateway();
      stops.push(['gateway', closeGateway]);
    }
    // The child worker's apps outlive it (a worker restarted by its supervisor adopts them): stopping the stack
    // stops every instance recorded for this data dir; an in-process worker's are those this process supervises.
    // A cluster's apps keep running: stopping only closes the connections to its API server.
    stops.push([
      'app instances',
      () =>
        childWorker && onThisMachine ? onThisMachine.stopEveryInstance(APP_STOP_GRACE_MS) : target.stopAll(APP_STOP_GRACE_MS),
    ]);

    let workerMetricsUrl: string | null = null;
    if (inProcessWorker) {
      const worker = await startWorker({
        temporalAddress,
        namespace: config.temporalNamespace,
        deps: { config, db, secretBox, target, builder: chosen.builder },
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

    const app = createApp({
      config,
      db,
      secretBox,
      temporal,
      temporalUiUrl: temporalUiUrl ?? config.temporalUiUrl,
      pokeOutbox: relay.poke,
      appLogSource: chosen.runner === 'kubernetes' ? chosen.target.appLogSource() : undefined,
    });
    const server = http.createServer(app.callback());
    answerClientErrorsWithJson(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, resolve);
    });
    const stopApi = () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()));
    const address = server.address();
    const apiPort = typeof address === 'object' && address ? address.port : config.port;
    const apiUrl = `http://${config.host}:${apiPort}`;
    onThisMachine?.setControlPlaneUrl(apiUrl);

    if (childWorker) {
      const worker = await startWorkerChild({
        config,
        databaseUrl,
        temporalAddress,
        runner: chosen.runner,
        containerSocket: chosen.engineSocket,
        gatewayPort: onThisMachine ? Number(new URL(onThisMachine.gatewayUrl()).port) : config.gatewayPort,
        apiUrl,
      });
      kills.push(worker.kill);
      // Stopped after the API (no new revisions reach it), before the apps; it leaves them to the stack to stop.
      stops.push(['worker', () => worker.stop(WORKER_STOP_MS)]);
      workerMetricsUrl = worker.metricsUrl;
    }
    stops.push(['api', stopApi]);

    // A child worker restores the apps itself when it starts; a cluster's apps are reconciled by a control worker.
    const restoresHere =
      chosen.runner === 'kubernetes' ? inProcessWorker && config.workerQueues.includes('control') : !childWorker;
    if (restoresHere) await target.restoreActiveInstances();

    return {
      apiUrl,
      gatewayUrl: onThisMachine?.gatewayUrl() ?? null,
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
