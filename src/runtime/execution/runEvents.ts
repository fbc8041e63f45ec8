/**
 * The events of the background runs this instance executes (and of its streamed runs created with `stream_resumable`), for `GET …/runs/{id}/stream` (join stream) and
 * `…/join`. Events get ids in order; a run created with `stream_resumable` keeps all of them so a client reconnecting
 * with `Last-Event-ID` gets what it missed; any other run keeps a short tail (a join sees the events from then on). A finished
 * run's log stays a short while for late joiners, then is dropped.
 */
import type { StreamEvent } from './graphStream';

export interface NumberedEvent extends StreamEvent {
  id: string;
}

const KEEP_AFTER_END_MS = 60_000;
const TAIL = 1_000;

class RunLog {
  readonly events: NumberedEvent[] = [];
  readonly listeners = new Set<() => void>();
  nextId = 0;
  done = false;
  constructor(readonly resumable: boolean) {}
}

export class RunEvents {
  private readonly logs = new Map<string, RunLog>();

  open(runId: string, resumable: boolean): void {
    this.logs.set(runId, new RunLog(resumable));
  }

  /** Numbers and keeps the event (returned with its id; as given when the run has no open log). */
  publish(runId: string, event: StreamEvent): StreamEvent & { id?: string } {
    const log = this.logs.get(runId);
    if (!log) return event;
    const numbered = { ...event, id: String(log.nextId++) };
    // A non-resumable log keeps a short tail only, enough for listeners that have not yet woken up to read.
    if (!log.resumable && log.events.length >= TAIL) log.events.shift();
    log.events.push(numbered);
    for (const wake of [...log.listeners]) wake();
    return numbered;
  }

  close(runId: string): void {
    const log = this.logs.get(runId);
    if (!log) return;
    log.done = true;
    for (const wake of [...log.listeners]) wake();
    setTimeout(() => this.logs.delete(runId), KEEP_AFTER_END_MS).unref();
  }

  /** Whether this instance has (or recently had) the run's events. */
  has(runId: string): boolean {
    return this.logs.has(runId);
  }

  /**
   * The run's events after `lastEventId` (`-1`: all that are kept), then live ones until the run ends or `signal`
   * aborts.
   */
  async *follow(runId: string, lastEventId: string | null, signal: AbortSignal): AsyncGenerator<NumberedEvent> {
    const log = this.logs.get(runId);
    if (!log) return;
    let cursor = lastEventId === null ? log.nextId : Number(lastEventId) + 1;
    if (!Number.isFinite(cursor) || cursor < 0) cursor = 0;
    for (;;) {
      for (const event of log.events) if (Number(event.id) >= cursor) yield event;
      cursor = Math.max(cursor, log.nextId);
      if (log.done || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          log.listeners.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        log.listeners.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }
}
