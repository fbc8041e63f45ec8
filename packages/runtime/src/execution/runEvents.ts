/**
 * The events of the runs this instance executes that others may join: background runs, and runs streamed on a
 * thread. Events get per-run numbers in order and live twice: in memory here, where a join on this instance reads
 * them without a query, and in the database (RunEventStore), written in batches (one statement per turn of the event
 * loop and run), where a join or thread stream on any instance reads them. Whoever waits for news of a run or a
 * thread (runFollower.ts) is woken by a local publish or by another instance's notification (`noteRemote`).
 */
import { logger } from '@graphx/kit/logger';
import { END_EVENT, type EventToStore, type RunEventStore } from '../storage/runEventStore';
import type { StreamEvent } from './graphStream';
import { toWireJson } from './serialize';

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

  constructor(private readonly store: RunEventStore | null = null) {}

  /**
   * Opens the run's log; events are numbered from `firstId` (a run taken over from a dead instance numbers on after
   * the events that one kept, see RunEventStore.nextSeq).
   */
  open(runId: string, options: { threadId: string | null; firstId?: number }): void {
    this.logs.set(runId, new RunLog(options.threadId, options.firstId ?? 0));
    this.wake(runId);
  }

  /** Numbers and keeps the event (returned with its id; as given when the run has no open log). */
  publish(runId: string, event: StreamEvent): StreamEvent & { id?: string } {
    const log = this.logs.get(runId);
    if (!log) return event;
    const numbered = { ...event, id: String(log.nextId++) };
    log.events.push(numbered);
    if (log.events.length > MEMORY_TAIL) log.events.shift();
    this.persist(runId, log, { seq: Number(numbered.id), event: event.event, json: toWireJson(event.data) });
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
    if (threadId) this.wake(`thread:${threadId}`);
  }

  /** Resolves at the next news of the run (or thread, `thread:<id>`), after `timeoutMs`, or when `signal` aborts. */
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
    if (!this.store) return;
    log.unwritten.push(event);
    if (log.flushScheduled) return;
    log.flushScheduled = true;
    const store = this.store;
    log.writing = log.writing.then(async () => {
      // Everything published while the previous write was in flight goes in this one.
      await new Promise((resolve) => setImmediate(resolve));
      log.flushScheduled = false;
      const batch = log.unwritten;
      log.unwritten = [];
      if (batch.length === 0) return;
      try {
        await store.append(runId, log.threadId, batch);
      } catch (error) {
        logger.warn({ err: error, runId }, 'run events not written; joins elsewhere miss them');
      }
      // Followers reading the database (thread streams, joins from further back than memory) find the rows now; the
      // database's notification of this write is for other instances (RunCoordinator ignores its own).
      this.wake(runId);
      if (log.threadId) this.wake(`thread:${log.threadId}`);
    });
  }
}
