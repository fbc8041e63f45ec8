/**
 * The Temporal worker: workflows and light activities on graphx-control, clone and build on graphx-build (low
 * concurrency: a build takes a whole core).
 */
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import { taskQueues } from '../../workflows/messages';
import { createMetricsRegistry } from '@graphx/kit/http/metrics';
import { Readiness } from '@graphx/kit/http/readiness';
import { logger } from '@graphx/kit/logger';
import { findFreePort } from '@graphx/kit/net/ports';
import { temporalConnectionOptions, temporalReadinessCheck } from '../temporal/client';
import { startWorkerMetricsServer } from './metricsServer';
import { timePipelineSteps } from './pipelineMetrics';
import { logSdkEntry } from './sdkLogging';

export interface WorkerHandle {
  /** Resolves when both workers have stopped. */
  shutdown: () => Promise<void>;
  /** Base URL of the metrics/readiness server, when one was asked for. */
  metricsUrl: string | null;
}

export interface StartWorkerOptions {
  temporalAddress: string;
  namespace: string;
  deps: ActivityDeps;
  /** A pre-built workflow bundle (tests share one); else workflows are bundled from source. */
  workflowBundlePath?: string;
  buildConcurrency?: number;
  /** Which task queues to poll (default both). A build-only worker scales builds apart from rollouts. */
  queues?: ReadonlyArray<'control' | 'build'>;
  /** Serve /metrics, /ready and /ok on host:port (0: a free port); absent: no server. */
  metrics?: { host: string; port: number };
}

/**
 * Heartbeats reach the server at most this often. The default (80% of the heartbeat timeout) would delay an
 * interrupt's cancellation by up to 8 s; a build is killed within about a second instead.
 */
export const HEARTBEAT_THROTTLE = {
  maxHeartbeatThrottleInterval: '1 second',
  defaultHeartbeatThrottleInterval: '1 second',
} as const;

export const WORKFLOWS_PATH = path.resolve(__dirname, '..', '..', 'workflows', 'index.ts');

/** Where this process's SDK runtime exports its metrics, when we installed it with an exporter. */
let sdkMetricsUrl: string | null = null;

/**
 * The SDK logs every worker state change at INFO; ours speak at WARN unless debugging. The Rust core's own lines are
 * forwarded to the same logger (`logging.forward`), so they come out as our JSON lines, not coloured text on stderr.
 * Its metrics go to a Prometheus exporter on a free loopback port that the worker's /metrics re-serves. The SDK would
 * also stop the workers on SIGINT by itself, racing `graphx start`'s ordered shutdown: the process owns its signals.
 */
async function installSdkRuntime(exportMetrics: boolean): Promise<void> {
  if (Runtime._instance) return; // Installed already (a second worker, or a test set-up).
  const debug = logger.isLevelEnabled('debug');
  const bindAddress = exportMetrics ? `127.0.0.1:${await findFreePort()}` : null;
  try {
    Runtime.install({
      logger: new DefaultLogger(debug ? 'INFO' : 'WARN', logSdkEntry),
      telemetryOptions: {
        logging: { filter: { core: debug ? 'INFO' : 'WARN', other: 'ERROR' }, forward: {} },
        ...(bindAddress
          ? {
              metrics: {
                prometheus: { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
              },
            }
          : {}),
      },
      shutdownSignals: [],
    });
    sdkMetricsUrl = bindAddress ? `http://${bindAddress}/metrics` : null;
  } catch {
    // Installed already (a second worker in this process, or a test set-up).
  }
}

export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  await installSdkRuntime(options.deps.config.temporalSdkMetrics);
  const connection = await NativeConnection.connect(temporalConnectionOptions(options.temporalAddress, options.deps.config));
  const registry = createMetricsRegistry('worker');
  const activities = timePipelineSteps(createActivities(options.deps), registry);
  const workflowSource: Partial<WorkerOptions> = options.workflowBundlePath
    ? { workflowBundle: { codePath: options.workflowBundlePath } }
    : { workflowsPath: WORKFLOWS_PATH };
  const { cloneRepository, buildApplication, ...controlActivities } = activities;
  const queues = options.queues ?? ['control', 'build'];
  const names = taskQueues(options.deps.config.taskQueuePrefix);
  const workers: Worker[] = [];
  if (queues.includes('control')) {
    workers.push(
      await Worker.create({
        connection,
        namespace: options.namespace,
        taskQueue: names.control,
        ...workflowSource,
        activities: controlActivities,
        ...HEARTBEAT_THROTTLE,
      }),
    );
  }
  if (queues.includes('build')) {
    workers.push(
      await Worker.create({
        connection,
        namespace: options.namespace,
        taskQueue: names.build,
        activities: { cloneRepository, buildApplication },
        maxConcurrentActivityTaskExecutions: options.buildConcurrency ?? 2,
        ...HEARTBEAT_THROTTLE,
      }),
    );
  }
  const running = Promise.all(workers.map((worker) => worker.run()));
  const readiness = new Readiness([
    { name: 'database', check: () => options.deps.db.raw('select 1') },
    temporalReadinessCheck(connection),
    {
      name: 'worker',
      check: async () => {
        const stopped = workers.find((worker) => worker.getState() !== 'RUNNING');
        if (stopped) throw new Error(`the ${stopped.options.taskQueue} worker is ${stopped.getState()}`);
      },
    },
  ]);
  const metricsServer = options.metrics
    ? await startWorkerMetricsServer({ ...options.metrics, registry, readiness, sdkMetricsUrl: () => sdkMetricsUrl })
    : null;
  return {
    metricsUrl: metricsServer?.url ?? null,
    shutdown: async () => {
      await metricsServer?.close();
      for (const worker of workers) {
        // A worker already stopping (its own fatal error) is fine: we only wait for it below.
        if (worker.getState() === 'RUNNING') worker.shutdown();
      }
      await running;
      await connection.close();
    },
  };
}
