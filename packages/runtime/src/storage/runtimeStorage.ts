/**
 * LangGraph's PostgreSQL checkpointer and long-term store as the server holds them. An app with a JavaScript graph
 * loads both at start: its graphs run with them. An app whose graphs are all Python never runs one in Node (its
 * executor checkpoints in Python); there the server needs the libraries only for `/store/*`, the executor's store calls
 * and a thread delete, and loading them (with `@langchain/core`, `langsmith`, `zod`: +28 MB resident) waits for the
 * first of those. Their migrations still run at every start under the schema lock, in a short-lived child process that
 * takes every module it loaded with it (decisions.md "LangChain JS on demand in a Python app").
 */
import { spawn } from 'node:child_process';
import type { BaseStore, Operation, OperationResults } from '@langchain/langgraph-checkpoint';
import type { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import type { Pool } from 'pg';
import { logger } from '@graphx/kit/logger';
import { lazy, type Lazy } from '../lazy';
import { createLongTermStore, STORE_MODULE, STORE_TTL_SWEEP_MINUTES } from './longTermStore';
import { CHECKPOINTER_MODULE, createTrackedPostgresSaver } from './trackedCheckpointer';

export interface RuntimeStorage {
  /** What graphs are given as their checkpointer (a Python graph only reads whether it has one). */
  graphCheckpointer: object;
  /** The long-term store: the graphs' `config.store`, `/store/*`, the Python executor's store calls. */
  store: BaseStore;
  /** The checkpointer's and the store's migrations, which ensureRuntimeSchema runs under its lock. */
  migrate(): Promise<void>;
  /** Resolves once no checkpoint write of this process for the thread is in flight. */
  settled(threadId: string): Promise<void>;
  /** Deletes the thread's checkpoints, after its writes in flight. */
  deleteThread(threadId: string): Promise<void>;
  stop(): Promise<void>;
}

type ModuleKind = 'module' | 'commonjs';

/** The libraries loaded now when the app has a JavaScript graph, else on first use. */
export function runtimeStorage(
  pool: Pool,
  databaseUri: string,
  moduleKind: ModuleKind,
  hasJavaScriptGraphs: boolean,
): Promise<RuntimeStorage> {
  return hasJavaScriptGraphs
    ? loadedStorage(pool, databaseUri, moduleKind)
    : Promise.resolve(onDemandStorage(pool, databaseUri, moduleKind));
}

/** Both libraries loaded now, as an app with a JavaScript graph needs them. */
async function loadedStorage(pool: Pool, databaseUri: string, moduleKind: ModuleKind): Promise<RuntimeStorage> {
  const checkpointer = await createTrackedPostgresSaver(pool, moduleKind);
  const store = createLongTermStore(databaseUri);
  return {
    graphCheckpointer: checkpointer,
    store,
    migrate: async () => {
      await checkpointer.setup();
      await store.setup();
    },
    settled: (threadId) => checkpointer.settled(threadId),
    deleteThread: async (threadId) => {
      await checkpointer.settled(threadId);
      await checkpointer.deleteThread(threadId);
    },
    stop: () => store.stop(),
  };
}

/** Python graphs only: their executor checkpoints; the graphs only read whether they have a checkpointer. */
const PYTHON_EXECUTOR_CHECKPOINTS = Object.freeze({ checkpointsIn: 'python-executor' });

/** Both libraries loaded on first use, each once (an app with only Python graphs). */
function onDemandStorage(pool: Pool, databaseUri: string, moduleKind: ModuleKind): RuntimeStorage {
  const checkpointer = lazy(() => createTrackedPostgresSaver(pool, moduleKind));
  const store = new OnDemandStore(
    lazy(async () => createLongTermStore(databaseUri)),
    pool,
  );
  return {
    graphCheckpointer: PYTHON_EXECUTOR_CHECKPOINTS,
    store: store as unknown as BaseStore,
    migrate: () => migrateInChildProcess(databaseUri),
    // A checkpointer not loaded yet has written nothing.
    settled: async (threadId) => {
      await checkpointer.loaded()?.settled(threadId);
    },
    deleteThread: async (threadId) => {
      const saver = await checkpointer.get();
      await saver.settled(threadId);
      await saver.deleteThread(threadId);
    },
    stop: () => store.stop(),
  };
}

/**
 * The methods of BaseStore the runtime calls, each on the PostgresStore made by the first of them. The store is never
 * `setup()` here (its migrations ran at start), so its own TTL sweeper never starts: this one sweeps, with the
 * library's statement, whether or not the store has been loaded (items another instance wrote expire here too).
 */
class OnDemandStore implements Pick<BaseStore, 'batch' | 'start' | 'stop'> {
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly made: Lazy<PostgresStore>,
    pool: Pool,
  ) {
    this.sweeper = setInterval(() => {
      pool
        .query('DELETE FROM "public".store WHERE expires_at IS NOT NULL AND expires_at <= CURRENT_TIMESTAMP')
        .catch((error: unknown) => logger.warn({ err: error }, 'store TTL sweep failed'));
    }, STORE_TTL_SWEEP_MINUTES * 60_000);
    this.sweeper.unref();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    return (await this.made.get()).batch(operations);
  }

  async get(...args: Parameters<PostgresStore['get']>): ReturnType<PostgresStore['get']> {
    return (await this.made.get()).get(...args);
  }

  async put(...args: Parameters<PostgresStore['put']>): ReturnType<PostgresStore['put']> {
    return (await this.made.get()).put(...args);
  }

  async delete(...args: Parameters<PostgresStore['delete']>): ReturnType<PostgresStore['delete']> {
    return (await this.made.get()).delete(...args);
  }

  async search(...args: Parameters<PostgresStore['search']>): ReturnType<PostgresStore['search']> {
    return (await this.made.get()).search(...args);
  }

  async listNamespaces(...args: Parameters<PostgresStore['listNamespaces']>): ReturnType<PostgresStore['listNamespaces']> {
    return (await this.made.get()).listNamespaces(...args);
  }

  start(): void {}

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    const loading = this.made.started();
    const store = loading ? await loading.catch(() => null) : null;
    await store?.stop();
  }
}

/**
 * The checkpointer's and the store's migrations (the same `setup()` calls a JavaScript app runs) in a short-lived
 * Node process on connections of its own, as the libraries' are when they migrate in this one. Not a worker thread:
 * its isolate is freed when it ends, but on Node 24 the process stays ~28 MB more resident after it (as much as
 * loading the modules here); a process gives everything back.
 */
async function migrateInChildProcess(databaseUri: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', MIGRATE_SOURCE], {
    env: {
      ...process.env,
      [MIGRATE_ENV]: JSON.stringify({
        databaseUri,
        pg: require.resolve('pg'),
        checkpointer: require.resolve(CHECKPOINTER_MODULE),
        store: require.resolve(STORE_MODULE),
      }),
    },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode) => resolve(exitCode));
  });
  if (code !== 0) {
    throw new Error(`The checkpointer's and the store's migrations failed (exit code ${code}): ${stderr.trim()}`);
  }
}

const MIGRATE_ENV = 'GRAPHX_RUNTIME_MIGRATE';

const MIGRATE_SOURCE = `
const task = JSON.parse(process.env.${MIGRATE_ENV});
const { Pool } = require(task.pg);
const { PostgresSaver } = require(task.checkpointer);
const { PostgresStore } = require(task.store);
(async () => {
  const pool = new Pool({ connectionString: task.databaseUri, max: 1 });
  pool.on('error', () => undefined);
  const store = new PostgresStore({ connectionOptions: { connectionString: task.databaseUri, max: 1 }, ensureTables: false });
  store.core.pool.on('error', () => undefined);
  try {
    await new PostgresSaver(pool).setup();
    await store.setup();
  } finally {
    await store.stop();
    await pool.end();
  }
})().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exitCode = 1;
});
`;
