/**
 * The Temporal worker: workflows and light activities on graphx-control, clone and build on graphx-build (low
 * concurrency: a build takes a whole core).
 */
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import { BUILD_TASK_QUEUE, CONTROL_TASK_QUEUE } from '../../workflows/messages';
import { logSdkEntry } from './sdkLogging';

export interface WorkerHandle {
  /** Resolves when both workers have stopped. */
  shutdown: () => Promise<void>;
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

/**
 * The SDK logs every worker state change at INFO; ours speak at WARN unless debugging. The SDK would also stop the
 * workers on SIGINT by itself, racing `graphx start`'s ordered shutdown: the process owns its signals instead.
 */
function installSdkRuntime(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger(process.env.GRAPHX_LOG_LEVEL === 'debug' ? 'INFO' : 'WARN', logSdkEntry),
      shutdownSignals: [],
    });
  } catch {
    // Installed already (a second worker in this process, or a test set-up).
  }
}

export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  installSdkRuntime();
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const activities = createActivities(options.deps);
  const workflowSource: Partial<WorkerOptions> = options.workflowBundlePath
    ? { workflowBundle: { codePath: options.workflowBundlePath } }
    : { workflowsPath: WORKFLOWS_PATH };
  const { cloneRepository, buildApplication, ...controlActivities } = activities;
  const queues = options.queues ?? ['control', 'build'];
  const workers: Worker[] = [];
  if (queues.includes('control')) {
    workers.push(
      await Worker.create({
        connection,
        namespace: options.namespace,
        taskQueue: CONTROL_TASK_QUEUE,
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
        taskQueue: BUILD_TASK_QUEUE,
        activities: { cloneRepository, buildApplication },
        maxConcurrentActivityTaskExecutions: options.buildConcurrency ?? 2,
        ...HEARTBEAT_THROTTLE,
      }),
    );
  }
  const running = Promise.all(workers.map((worker) => worker.run()));
  return {
    shutdown: async () => {
      for (const worker of workers) {
        // A worker already stopping (its own fatal error) is fine: we only wait for it below.
        if (worker.getState() === 'RUNNING') worker.shutdown();
      }
      await running;
      await connection.close();
    },
  };
}
