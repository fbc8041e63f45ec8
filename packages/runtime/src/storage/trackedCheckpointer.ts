/**
 * The PostgreSQL checkpointer, remembering which writes are still in flight per thread. LangGraph saves checkpoints
 * in the background of a run, so a run stopped by its AbortSignal can still have a `put` travelling to the database
 * when its stream has already ended; whoever deletes or hands over the thread (rollback, thread delete, release)
 * first waits for those writes, or a checkpoint of the stopped run would land afterwards.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import type * as CheckpointPostgres from '@langchain/langgraph-checkpoint-postgres';
import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { Pool } from 'pg';
import { checkpointStatement, MAX_BLOB_ROWS, MAX_WRITE_ROWS, writesStatement } from './checkpointStatements';

/** A PostgresSaver that knows its writes in flight. */
export interface TrackedPostgresSaver extends PostgresSaver {
  /** Resolves once no write for `threadId` is in flight (writes started meanwhile are waited for too). */
  settled(threadId: string): Promise<void>;
}

/** The checkpointer's package, loaded when a checkpointer is made (an app with only Python graphs may never make one). */
export const CHECKPOINTER_MODULE = '@langchain/langgraph-checkpoint-postgres';

// A real dynamic import even where TypeScript compiles `import()` to `require()` (CommonJS output).
const dynamicImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<any>;

/**
 * The checkpointer on `pool`, loaded as the application's modules are (`moduleKind`: ES or CommonJS). Node keeps a
 * package's CommonJS and ES builds apart, so loading the other kind than the graphs do costs a second
 * `@langchain/core` (+36 MB RSS) whenever the application resolves our packages (`graphx dev` of a folder in ours).
 */
export async function createTrackedPostgresSaver(pool: Pool, moduleKind: 'module' | 'commonjs'): Promise<TrackedPostgresSaver> {
  const specifier = CHECKPOINTER_MODULE;
  const { PostgresSaver: Saver } = (
    moduleKind === 'module' ? await dynamicImport(specifier) : require(specifier)
  ) as typeof CheckpointPostgres;
  return new (trackedClass(Saver))(pool);
}

function trackedClass(Saver: typeof PostgresSaver) {
  return class extends Saver implements TrackedPostgresSaver {
    private readonly inFlight = new Map<string, Set<Promise<unknown>>>();
    private versionSequence = 0;

    /**
     * Channel versions unique per write, still numbers that grow. The library's default (previous + 1) gives a
     * fork (a run from an earlier checkpoint) the same version numbers the abandoned branch used, and the saver
     * stores blobs by (thread, channel, version) keeping the first: the fork would read the other branch's values.
     * Microseconds since the epoch stay below 2^53 and exceed any version of a thread written before this change.
     */
    override getNextVersion(current: number | undefined): number {
      this.versionSequence = (this.versionSequence + 1) % 1000;
      return Math.max((current ?? 0) + 1, Date.now() * 1000 + this.versionSequence);
    }

    constructor(private readonly writePool: Pool) {
      super(writePool);
    }

    override put(...args: Parameters<PostgresSaver['put']>): ReturnType<PostgresSaver['put']> {
      // As the anchor: a checkpoint carries its run's metadata (run ids and the client's run metadata), so history
      // can be filtered by it; the loop's own keys (source, step, parents) win.
      const [config, checkpoint, metadata, newVersions] = args;
      const merged = { ...(config.metadata ?? {}), ...metadata } as typeof metadata;
      return this.track(config, this.putInOneStatement(config, checkpoint, merged, newVersions));
    }

    override putWrites(...args: Parameters<PostgresSaver['putWrites']>): ReturnType<PostgresSaver['putWrites']> {
      return this.track(args[0], this.putWritesInOneStatement(...args));
    }

    /** The library's `put`, its rows written by one statement (checkpointStatements.ts). */
    private async putInOneStatement(...[config, checkpoint, metadata, newVersions]: Parameters<PostgresSaver['put']>) {
      if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
      if (Object.keys(newVersions).length > MAX_BLOB_ROWS) return super.put(config, checkpoint, metadata, newVersions);
      const { thread_id: threadId, checkpoint_ns: namespace = '', checkpoint_id: parentId } = config.configurable;
      const [blobs, storedMetadata] = await Promise.all([
        this._dumpBlobs(threadId, namespace, checkpoint.channel_values, newVersions),
        this._dumpMetadata(metadata),
      ]);
      const row = [threadId, namespace, checkpoint.id, parentId, this._dumpCheckpoint(checkpoint), storedMetadata];
      const { text, values } = checkpointStatement(row, blobs);
      await this.writePool.query(text, values);
      return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id } };
    }

    /** The library's `putWrites`, its rows written by one statement (checkpointStatements.ts). */
    private async putWritesInOneStatement(...[config, writes, taskId]: Parameters<PostgresSaver['putWrites']>) {
      if (writes.length > MAX_WRITE_ROWS) return super.putWrites(config, writes, taskId);
      const { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId } = config.configurable ?? {};
      const statement = writesStatement(await this._dumpWrites(threadId, namespace, checkpointId, taskId, writes));
      if (statement) await this.writePool.query(statement.text, statement.values);
    }

    /** Resolves once no write for `threadId` is in flight (writes started meanwhile are waited for too). */
    async settled(threadId: string): Promise<void> {
      for (let pending = this.inFlight.get(threadId); pending && pending.size > 0; pending = this.inFlight.get(threadId)) {
        await Promise.allSettled([...pending]);
      }
    }

    private track<T>(config: RunnableConfig, write: Promise<T>): Promise<T> {
      const threadId = config.configurable?.thread_id as string | undefined;
      if (!threadId) return write;
      const pending = this.inFlight.get(threadId) ?? new Set<Promise<unknown>>();
      this.inFlight.set(threadId, pending);
      // Settles either way and never rejects: the caller of put/putWrites handles the write's own failure.
      const forget = () => {
        pending.delete(done);
        if (pending.size === 0 && this.inFlight.get(threadId) === pending) this.inFlight.delete(threadId);
      };
      const done: Promise<void> = write.then(forget, forget);
      pending.add(done);
      return write;
    }
  };
}
