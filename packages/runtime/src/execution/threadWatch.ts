/**
 * What a thread follower on this instance learns without asking the database (thread streams, protocol-v2 streams):
 * the rows this instance just wrote for the thread (handed over once their insert answered, with the ids the database
 * gave them), or that it must read the database — another instance wrote (its notification), too many rows waited,
 * a write's answer was lost, or a second passed without news (the safety net for a lost notification). A thread's
 * writes on one instance go one at a time (RunEvents), so the rows handed over come in row-id order, each batch
 * after everything this instance wrote before it.
 */
import { compareRowIds, type StoredRunEvent } from '../storage/runEventStore';

// A follower that falls this far behind (a slow reader) drops what waits for it and reads the database instead.
const MAX_WAITING_ROWS = 2_000;

export class ThreadWatch {
  private waiting: StoredRunEvent[] = [];
  private stale: boolean;
  private wake: (() => void) | null = null;

  constructor(
    private readonly watchers: ThreadWatchers,
    readonly threadId: string,
    readFirst: boolean,
  ) {
    this.stale = readFirst;
  }

  /** What came since the last take: rows written here (oldest first), or `stale` (read the database, rows may be missing). */
  take(): { rows: StoredRunEvent[]; stale: boolean } {
    const taken = { rows: this.waiting, stale: this.stale };
    this.waiting = [];
    this.stale = false;
    return taken;
  }

  /** The database has rows this watch was not given: the next take says `stale`. */
  markStale(): void {
    this.stale = true;
    this.waiting = [];
    this.wake?.();
  }

  receive(rows: StoredRunEvent[]): void {
    // A read is coming anyway, and it finds these rows (they are committed).
    if (this.stale) return;
    if (this.waiting.length + rows.length > MAX_WAITING_ROWS) return this.markStale();
    this.waiting = this.waiting.length === 0 ? rows : this.waiting.concat(rows);
    this.wake?.();
  }

  /** Resolves when there is something to take, when `signal` aborts, or after `timeoutMs` (then the take is stale). */
  next(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.stale || this.waiting.length > 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(() => {
        this.stale = true;
        done();
      }, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  close(): void {
    this.wake?.();
    this.watchers.remove(this);
  }
}

/** The thread watches open on this instance. */
export class ThreadWatchers {
  private readonly byThread = new Map<string, Set<ThreadWatch>>();

  /** `readFirst`: the first take is stale (the follower reads the database before anything is handed over). */
  watch(threadId: string, readFirst: boolean): ThreadWatch {
    const watch = new ThreadWatch(this, threadId, readFirst);
    const set = this.byThread.get(threadId) ?? new Set();
    this.byThread.set(threadId, set);
    set.add(watch);
    return watch;
  }

  remove(watch: ThreadWatch): void {
    const set = this.byThread.get(watch.threadId);
    if (!set?.delete(watch) || set.size > 0) return;
    this.byThread.delete(watch.threadId);
  }

  /** Hands rows written here to the thread's watches; `rows` is called only when the thread has one. */
  deliver(threadId: string, rows: () => StoredRunEvent[]): void {
    const set = this.byThread.get(threadId);
    if (!set) return;
    const written = rows().sort((a, b) => compareRowIds(a.id, b.id));
    if (written.length === 0) return;
    for (const watch of set) watch.receive(written);
  }

  markStale(threadId: string): void {
    for (const watch of this.byThread.get(threadId) ?? []) watch.markStale();
  }
}
