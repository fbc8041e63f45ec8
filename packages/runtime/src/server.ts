/**
 * Builds and serves the runtime: database pool and schema, checkpointer, graphs, auth, routes, recorder. `stop()`
 * stops accepting, lets running streams finish (up to 30 s), then drains the run records.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import Koa from 'koa';
import { Pool } from 'pg';
import { answerClientErrorsWithJson } from '@graphx/kit/http/clientErrors';
import { setPlainJsonBodiesDirectly } from '@graphx/kit/http/plainJsonBodies';
import { errorMiddleware } from '@graphx/kit/http/errors';
import { jsonBodyMiddleware } from '@graphx/kit/http/jsonBody';
import Router from '@koa/router';
import { everyHttpMethod } from '@graphx/kit/http/router';
import { requestIdMiddleware } from '@graphx/kit/http/requestId';
import { INSTANCE_ENV } from '@graphx/contract/instanceEnv';
import { requestLogMiddleware } from '@graphx/kit/http/requestLog';
import { logger } from '@graphx/kit/logger';
import { applyAppEnv, loadAppConfig } from './appConfig';
import { executorLoss, type RuntimeLoss } from './runtimeLoss';
import { authMiddleware } from './auth/authMiddleware';
import { ControlPlaneClient } from './controlPlaneClient';
import { BackgroundRuns } from './execution/backgroundRuns';
import { CronScheduler } from './execution/cronScheduler';
import { RunCoordinator } from './execution/runCoordinator';
import { RunEvents } from './execution/runEvents';
import { RunEventStore } from './storage/runEventStore';
import { runtimeTypeParsers } from './storage/byteaArrays';
import { registerUiRoutes } from './http/routes/uiRoutes';
import { bundleUi } from './uiBundles';
import { RunService } from './execution/runService';
import { appLangGraph } from './appLangGraph';
import { ThreadStateService } from './execution/threadState';
import { ThreadService } from './execution/threadService';
import { TtlSweeper } from './execution/ttlSweeper';
import { AssistantDirectory, assistantConfigOf } from './assistants';
import { importAsApp } from './graphSchemas';
import { httpExceptionMiddleware } from '@graphx/kit/http/httpException';
import { corsMiddleware } from './http/cors';
import { devStudioPagesMiddleware, isDevStudioToken } from './http/devStudio';
import { headerRuleMiddleware, headerRuleOf } from './http/requestHeaders';
import { bindLoopback, loopbackBaseUrl, loopbackToken } from './http/loopback';
import { disabledRoutesMiddleware, unlessServerOwned } from './http/customApp';
import type { RuntimeServices } from './http/routes/context';
import { registerRuntimeRoutes } from './http/routes';
import { passUpgradeThroughApp } from './http/upgrade';
import { closeProtocolSockets } from './protocol/socketSession';
import { RuntimeMetrics } from './metrics';
import { RunRecorder } from './recording/runRecorder';
import { TraceShipper } from './recording/traceShipper';
import { CronStore } from './storage/cronStore';
import { RunQueueStore } from './storage/runQueueStore';
import { RunStore } from './storage/runStore';
import { webhookDeliverer } from './recording/webhook';
import { runTuningFromEnv } from './settings';
import { AssistantStore } from './storage/assistantStore';
import { keepLatestCheckpoint } from './storage/checkpointPrune';
import { ensureRuntimeSchema } from './storage/schema';
import { runtimeStorage } from './storage/runtimeStorage';
import { packageModuleKind } from './typeScriptModules';
import { ThreadLeases } from './storage/threadLeases';
import { ThreadStore } from './storage/threadStore';
import { threadStorage } from './storage/threadStorage';
import { startIdleMemoryReducer } from './idleMemory';
import { survivePoolConnectionLoss } from './storage/idleConnections';
import { poolSmallRandomValues } from './randomPool';
import { loadApplication } from './appLoading';

export interface RuntimeOptions {
  configPath: string;
  databaseUri: string;
  port: number;
  host: string;
  /** Null in `graphx dev`: no API-key check, no tracing. */
  controlPlane: { url: string; serviceToken: string; socketPath?: string | null } | null;
  /** `graphx dev` only: serve the studio under /studio/ and admit its token as a debugging-UI user. */
  devStudio?: boolean;
}

export interface RunningRuntime {
  url: string;
  port: number;
  stop: () => Promise<void>;
  /**
   * Settles when a part the runtime cannot serve without has gone by itself (the Python executor killed by the OOM
   * killer or crashed): the process should stop and exit with `exitCode` so that its runner replaces it.
   */
  lost: Promise<RuntimeLoss>;
}

const DRAIN_TIMEOUT_MS = 30_000;

function packageVersion(appDir: string, name: string): string | null {
  try {
    return (createRequire(path.join(appDir, 'noop.js'))(`${name}/package.json`) as { version: string }).version;
  } catch {
    return null;
  }
}

/**
 * Makes `getLogger()` of `@langchain/langgraph-sdk/logging` work in app code, at import time included: the SDK reads
 * its logger from this global symbol, which the anchor's server sets before it loads graphs.
 */
function registerSdkLogger(): void {
  const key = Symbol.for('langgraph.api.sdk-logger');
  (globalThis as Record<symbol, unknown>)[key] ??= logger.child({ component: 'app' });
}

/**
 * Starts one runtime instance and resolves once it serves (GET /ok answers 200).
 * @throws ConfigError for a bad graphx.json, a graph or auth module that does not load.
 */
export async function startRuntime(options: RuntimeOptions): Promise<RunningRuntime> {
  poolSmallRandomValues();
  const appConfig = loadAppConfig(options.configPath);
  applyAppEnv(appConfig.env);
  // Before anything is opened: a component that does not compile stops the start with nothing to clean up.
  const uiBundles = await bundleUi(appConfig.appDir, appConfig.ui.components, appConfig.ui.shared);

  // bytea[] (the checkpointer's channel values) read without pg-types' character-by-character array parser.
  const pool = new Pool({ connectionString: options.databaseUri, max: 20, types: runtimeTypeParsers });
  survivePoolConnectionLoss(pool, 'database');
  const hasJavaScriptGraphs = appConfig.graphs.some((graph) => graph.language !== 'python');
  // LangChain JS (checkpointer, store) loaded at start for JavaScript graphs, on first use when every graph is Python.
  const storage = await runtimeStorage(pool, options.databaseUri, packageModuleKind(appConfig.appDir), hasJavaScriptGraphs);
  const { store } = storage;
  await ensureRuntimeSchema(pool, () => storage.migrate());

  registerSdkLogger();
  // A graph, auth or app that does not load stops the start with the pools closed (else the process would linger).
  const tuning = runTuningFromEnv();
  const { python, graphs, appAuth, customApp } = await loadApplication(appConfig, options.databaseUri, storage, {
    pythonCancelGraceMs: tuning.pythonCancelGraceMs,
  }).catch(async (error: unknown) => {
    await storage.stop().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw error;
  });
  const controlPlane = options.controlPlane
    ? new ControlPlaneClient(options.controlPlane.url, options.controlPlane.serviceToken, options.controlPlane.socketPath ?? null)
    : null;

  const assistantStore = new AssistantStore(pool);
  await assistantStore.syncSystemAssistants(graphs.graphs.map((graph) => graph.assistant));
  const assistants = new AssistantDirectory(graphs, assistantStore, appAuth);
  const threads = new ThreadStore(pool);
  const runs = new RunStore(pool);
  // Names this process as the owner of the thread leases it takes (readable in the table, unique per start).
  const instanceId = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  const coordinator = new RunCoordinator(pool, options.databaseUri, new ThreadLeases(pool, instanceId, tuning.leaseMs));
  await coordinator.start();
  const shipper = controlPlane ? new TraceShipper(runs, controlPlane) : null;
  const recorder = new RunRecorder(runs, () => shipper?.kick());
  const metrics = new RuntimeMetrics();
  const appLibrary = appLangGraph(appConfig.appDir);
  const runService = new RunService({
    assistants,
    threads,
    runs,
    recorder,
    coordinator,
    checkpointWrites: storage,
    claimLimits: { enqueueWaitMs: tuning.enqueueWaitMs },
    appAuth,
    tracing: controlPlane !== null,
    metrics,
    deliverWebhook: webhookDeliverer(tuning.webhookDestinations),
    commandClass: () => appLibrary.commandClass(),
    protocolEventKit: () => appLibrary.protocolEventKit(),
  });

  // An API-side instance leaves background runs to the queue side's instances (GRAPHX_RUNTIME_ROLE).
  const runQueue = new RunQueueStore(pool, instanceId, tuning.leaseMs, tuning.role === 'api');
  const eventStore = new RunEventStore(pool, instanceId);
  const runEvents = new RunEvents(eventStore);
  coordinator.onEvents = (runId, threadId) => runEvents.noteRemote(runId, threadId);
  const backgroundRuns = new BackgroundRuns({
    runService,
    queue: runQueue,
    runs,
    threads,
    coordinator,
    events: runEvents,
    eventStore,
    concurrency: tuning.backgroundConcurrency,
  });

  const crons = new CronStore(pool);
  const cronScheduler = new CronScheduler({ crons, runQueue, threads, backgroundRuns, coordinator, sleepMs: tuning.cronPollMs });

  const services: RuntimeServices = {
    graphs,
    assistants,
    appImport: (specifier, condition) => importAsApp(appConfig.appDir, specifier, condition),
    threads,
    runs,
    runService,
    threadState: new ThreadStateService({
      graphs,
      threads,
      leases: coordinator.leases,
      afterRelease: (threadId) => coordinator.announceRelease(threadId),
      hasPendingRuns: async (threadId) => (await runQueue.withStatus(threadId, ['pending'])).length > 0,
      assistantConfig: (assistantId) => assistantConfigOf(assistants, assistantId),
      commandClass: () => appLibrary.commandClass(),
    }),
    backgroundRuns,
    runQueue,
    runEvents,
    eventStore,
    store,
    crons,
    coordinator,
    appAuth,
    deleteCheckpoints: (threadId) => storage.deleteThread(threadId),
    pruneCheckpoints: async (threadId) => {
      await storage.settled(threadId);
      await keepLatestCheckpoint(pool, threadId);
    },
    // The Python server's shape (version, langgraph_py_version, flags, host, metadata), as LangSmith's clients read it,
    // with the JS server's `langgraph_js_version`/`context` beside it; each version is that of the graphs' language
    // (null when no graph is in it), the context `python` only when every graph is Python.
    info: {
      version: '0.1.0',
      langgraph_py_version: python ? ((await python.call<{ langgraph: string | null }>('versions', {})).langgraph ?? null) : null,
      langgraph_js_version: hasJavaScriptGraphs ? packageVersion(appConfig.appDir, '@langchain/langgraph') : null,
      context: hasJavaScriptGraphs ? 'js' : 'python',
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false, graphx: true },
      host: {
        kind: 'self-hosted',
        project_id: process.env[INSTANCE_ENV.deploymentId] ?? null,
        host_revision_id: null,
        revision_id: process.env[INSTANCE_ENV.revisionId] ?? null,
        tenant_id: process.env[INSTANCE_ENV.tenantId] ?? null,
      },
      metadata: {},
    },
    threadStorage: (threadId) => threadStorage(pool, threadId),
    checkDatabase: async () => {
      await pool.query('SELECT 1');
    },
    metrics,
    customOpenApi: customApp?.openapi ?? null,
  };

  const threadService = new ThreadService(services);
  const ttlSweeper = new TtlSweeper({
    threads,
    deleteThread: (threadId) => threadService.delete(threadId, {}),
    pruneCheckpoints: services.pruneCheckpoints,
    intervalMs: tuning.ttlSweepMs,
  });

  const router = new Router({ methods: everyHttpMethod() });
  registerRuntimeRoutes(router, services);
  registerUiRoutes(router, uiBundles);

  const app = new Koa();
  setPlainJsonBodiesDirectly(app);
  app.use(requestIdMiddleware());
  // First, as the anchor orders it: a preflight is answered before auth, and every answer (errors too) carries CORS.
  app.use(corsMiddleware(appConfig.http.cors));
  // At debug: this process's stdout is the tenant's app log, and a line per run would drown the app's own lines.
  app.use(requestLogMiddleware(logger, { level: 'debug', metrics: metrics.http }));
  app.use(errorMiddleware());
  app.use(httpExceptionMiddleware());
  if (options.devStudio) app.use(devStudioPagesMiddleware());
  app.use(jsonBodyMiddleware({ deferErrors: customApp !== null, maxBytes: tuning.maxRequestBodyBytes }));
  app.use(authMiddleware({ appAuth, controlPlane, devStudio: options.devStudio ? { isToken: isDevStudioToken } : null }));
  if (appConfig.http.configurableHeaders) app.use(headerRuleMiddleware(headerRuleOf(appConfig.http.configurableHeaders)));
  if (customApp) app.use(unlessServerOwned(customApp.middleware));
  if (appConfig.http.disabled.length > 0) app.use(disabledRoutesMiddleware(appConfig.http.disabled));
  app.use(router.routes());
  app.use(router.allowedMethods());

  const handler = app.callback();
  const server = http.createServer(handler);
  answerClientErrorsWithJson(server);
  server.on('upgrade', (req, socket, head) => passUpgradeThroughApp(handler, req, socket, head));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  bindLoopback(options.host, port);
  // Python app code's `get_client()` without a url reaches this server as JavaScript's `new Client()` does.
  if (python) await python.call('set_loopback', { url: loopbackBaseUrl(), token: loopbackToken() });
  shipper?.kick();
  backgroundRuns.kick();
  cronScheduler.kick();
  ttlSweeper.start();
  const idleMemory = startIdleMemoryReducer({ windowMs: tuning.idleCollectMs, onReduced: () => metrics.idleCollections.inc() });
  logger.info({ port, graphs: appConfig.graphs.map((graph) => graph.graphId), customAuth: Boolean(appAuth) }, 'runtime serving');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      idleMemory.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      closeProtocolSockets();
      const deadline = setTimeout(() => {
        server.closeAllConnections();
        closeProtocolSockets(true);
      }, DRAIN_TIMEOUT_MS);
      await closed;
      clearTimeout(deadline);
      // In order, each whatever the one before did: a part that fails to close must not leave the rest (the pools
      // above all) open; the first failure is what the caller hears, every one is logged.
      const failures: unknown[] = [];
      const closers: Array<[string, () => Promise<unknown> | undefined]> = [
        ['cron scheduler', () => cronScheduler.close()],
        ['thread TTL sweeper', () => ttlSweeper.close()],
        ['background runs', () => backgroundRuns.close()],
        ['run coordinator', () => coordinator.close()],
        ['run recorder', () => recorder.close()],
        ['python executor', () => python?.close()],
        ['store', () => storage.stop()],
        ['trace shipper', () => shipper?.close()],
        ['database pool', () => pool.end()],
      ];
      for (const [part, close] of closers) {
        await Promise.resolve()
          .then(close)
          .catch((error: unknown) => {
            logger.error({ err: error, part }, 'runtime part did not close');
            failures.push(error);
          });
      }
      if (failures.length > 0) throw failures[0];
    })());

  const lost = new Promise<RuntimeLoss>((resolve) =>
    python?.onUnexpectedExit((code, signal, killedFor) => resolve(executorLoss(code, signal, killedFor))),
  );
  return { url: `http://${options.host}:${port}`, port, stop, lost };
}
