/**
 * The events of the runs this instance executes that others may join: background runs, and runs streamed on a
 * thread. Events get per-run numbers in order and live twice: in memory here, where a join on this instance reads
 * them without a query, and in the database (RunEventStore), written in batches (one statement per turn of the event
 * loop and run), where a join or thread stream on any instance reads them. Whoever waits for news of a run
 * (runFollower.ts) is woken by a local publish or by another instance's notification (`noteRemote`); a thread's
 * followers here are handed the rows as written (threadWatch.ts), and told by a notification to read the database.
 */
import { logger } from '@graphx/kit/logger';
import { END_EVENT, writtenRows, type EventToStore, type RunEventStore } from '../storage/runEventStore';
import type { StreamEvent } from './graphStream';
import { keepWireJson, toWireJson } from './serialize';
import { ThreadWatchers, type ThreadWatch } from './threadWatch';

export interface NumberedEvent extends StreamEvent {
  id: string;
}

// A finished run's events stay in memory a short while for joins arriving just after; the database keeps them longer.
const KEEP_AFTER_END_MS = 30_000;
// A long run keeps only its newest events in memory; a join from further back reads the database.
const MEMORY_TAIL = 2_000;

class RunLog {
  readonly events: NumberedEvent[] = [];
  done = false;
  /** Events not yet written to the database, and the write in flight (one at a time keeps them in order). */
  unwritten: EventToStore[] = [];
  writing: Promise<void> = Promise.resolve();
  flushScheduled = false;
  nextId: number;
  constructor(
    readonly threadId: string | null,
    private readonly firstId: number,
  ) {
    this.nextId = firstId;
  }

  /** The id of the oldest event still in memory (the next one's when none was published yet). */
  get firstKept(): number {
    return this.events.length > 0 ? Number(this.events[0]!.id) : this.firstId;
  }
}

export class RunEvents {
  private readonly logs = new Map<string, RunLog>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly watchers = new ThreadWatchers();
  /** Per thread, the last write queued: a thread's writes go one at a time, whichever run they belong to. */
  private readonly threadTails = new Map<string, Promise<void>>();

  constructor(private readonly store: RunEventStore | null = null) {}

  /**
   * Opens the run's log; events are numbered from `firstId` (a run taken over from a dead instance numbers on after
   * the events that one kept, see RunEventStore.nextSeq).
   */
  open(runId: string, options: { threadId: string | null; firstId?: number }): void {
    this.logs.set(runId, new RunLog(options.threadId, options.firstId ?? 0));
    this.wake(runId);
  }

  /**
   * Numbers and keeps the event (returned with its id; as given when the run has no open log). `toWire`: the caller
   * writes it to an SSE stream next, which then takes the JSON made here (serialize.ts `takeWireJson`).
   */
  publish(runId: string, event: StreamEvent, toWire = false): StreamEvent & { id?: string } {
    const log = this.logs.get(runId);
    if (!log) return event;
    const numbered = { ...event, id: String(log.nextId++) };
    log.events.push(numbered);
    if (log.events.length > MEMORY_TAIL) log.events.shift();
    const json = toWireJson(event.data);
    if (toWire) keepWireJson(numbered, json);
    this.persist(runId, log, { seq: Number(numbered.id), event: event.event, json });
    this.wake(runId);
    return numbered;
  }

  /**
   * Ends the run's log; resolves once every event is in the database. `ended`: the run is over (an end mark is
   * written); false when this instance let go of a run another one continues (its lease was lost).
   */
  async close(runId: string, ended = true): Promise<void> {
    const log = this.logs.get(runId);
    if (!log) return;
    if (!ended) {
      // Joiners here go on reading the database, where the instance continuing the run writes.
      this.logs.delete(runId);
      this.wake(runId);
      return log.writing;
    }
    log.done = true;
    this.persist(runId, log, { seq: log.nextId++, event: END_EVENT, json: 'null' });
    this.wake(runId);
    setTimeout(() => this.logs.get(runId) === log && this.logs.delete(runId), KEEP_AFTER_END_MS).unref();
    await log.writing;
  }

  /** The run's log on this instance, if it executes (or recently executed) the run here. */
  local(runId: string): { events: readonly NumberedEvent[]; done: boolean; firstKept: number } | undefined {
    return this.logs.get(runId);
  }

  /** Another instance wrote events of `runId` on `threadId` (its notification). */
  noteRemote(runId: string | null, threadId: string | null): void {
    if (runId) this.wake(runId);
    if (threadId) this.watchers.markStale(threadId);
  }

  /**
   * Watches the thread's events written from now on (threadWatch.ts); `readFirst`: the follower reads the database
   * before anything is handed over. The caller closes it.
   */
  watchThread(threadId: string, readFirst = true): ThreadWatch {
    return this.watchers.watch(threadId, readFirst);
  }

  /** Writes events of no run on the thread (`state_update`), in order with its runs' events; followers here get them. */
  appendToThread(threadId: string, events: EventToStore[]): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    return this.inThreadOrder(threadId, Promise.resolve(), () => this.write(store, null, threadId, events, true));
  }

  /** Resolves at the next news of the run, after `timeoutMs`, or when `signal` aborts. */
  waitForNews(key: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const set = this.waiters.get(key) ?? new Set();
      this.waiters.set(key, set);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  private wake(key: string): void {
    for (const done of [...(this.waiters.get(key) ?? [])]) done();
  }

  private persist(runId: string, log: RunLog, event: EventToStore): void {
    const store = this.store;
    if (!store) return;
    log.unwritten.push(event);
    if (log.flushScheduled) return;
    log.flushScheduled = true;
    log.writing = this.inThreadOrder(log.threadId, log.writing, async () => {
      // Everything published while the previous write was in flight goes in this one.
      await new Promise((resolve) => setImmediate(resolve));
      log.flushScheduled = false;
      const batch = log.unwritten;
      log.unwritten = [];
      if (batch.length === 0) return;
      await this.write(store, runId, log.threadId, batch, false);
      // Followers reading the database (joins from further back than memory) find the rows now; the database's
      // notification of this write is for other instances (RunCoordinator ignores its own).
      this.wake(runId);
    });
  }

  /**
   * Appends and hands the rows to the thread's followers here. A write whose answer is lost may still have been
   * committed: the followers then read the database.
   */
  private async write(
    store: RunEventStore,
    runId: string | null,
    threadId: string | null,
    events: EventToStore[],
    rethrow: boolean,
  ): Promise<void> {
    try {
      const written = await store.append(runId, threadId, events);
      if (threadId) this.watchers.deliver(threadId, () => writtenRows(runId, events, written));
    } catch (error) {
      if (threadId) this.watchers.markStale(threadId);
      if (rethrow) throw error;
      logger.warn({ err: error, runId }, 'run events not written; joins elsewhere miss them');
    }
  }

  /**
   * Queues `write` after the thread's last write (after `previous`, the run's own last write, when it has no
   * thread): the thread's rows are then committed, and handed to followers, in the order of their ids. A failed
   * write does not stop the ones queued after it.
   */
  private inThreadOrder(threadId: string | null, previous: Promise<void>, write: () => Promise<void>): Promise<void> {
    const done = (threadId ? (this.threadTails.get(threadId) ?? previous) : previous).then(write);
    if (!threadId) return done;
    const tail = done.catch(() => undefined);
    this.threadTails.set(threadId, tail);
    void tail.then(() => this.threadTails.get(threadId) === tail && this.threadTails.delete(threadId));
    return done;
  }
}
