/**
 * Gives the young generation back when the server has gone quiet. A container instance runs with 16 MB semi-spaces
 * (src/pipeline/runtimeEnv.ts: 20–45 % less CPU per run under load), and V8 keeps both semi-spaces committed, used or
 * not, after a start or light traffic: ~20 MB of an idle app's RSS on Node 22/24 (decisions.md "Idle RSS of a Python
 * app"). V8 shrinks them in its memory reducer's collections, which only heavy traffic arms (idleMemory.test.ts saw it
 * after a second of back-to-back runs), or in a "last resort" collection, which nothing triggers in a server that just
 * waits; this runs one after a busy spell is followed by a quiet one, and the semi-spaces grow back under load.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

type CollectGarbage = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let collector: CollectGarbage | null | undefined;

/**
 * V8's `gc` function without `--expose-gc` on the command line (which would have to be in every runner's command):
 * the flag is read when a context is created, so a context made while it is set holds the function. The flag is put
 * back at once, so contexts made later (the app's) do not get one.
 */
export function garbageCollector(): CollectGarbage | null {
  if (collector !== undefined) return collector;
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return (collector = global as CollectGarbage);
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    collector = typeof gc === 'function' ? (gc as CollectGarbage) : null;
  } catch {
    collector = null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return collector;
}

export interface IdleMemoryReducer {
  stop(): void;
}

export interface IdleMemoryOptions {
  /** Length of the window the event loop's use is measured over; 0 turns the reducer off. */
  windowMs: number;
  /** A window whose event-loop utilisation is at most this is quiet (timers, lease renewals and pool pings are ~0.1 %). */
  quietUtilization?: number;
  /** Called after each collection (the runtime counts them in its metrics). */
  onReduced?: () => void;
}

/**
 * Watches the event loop's utilisation in windows of `windowMs`; the first quiet window after a busy one (or after
 * the start, which allocates the most) runs one last-resort collection. A server that stays quiet is left alone, and
 * the collection's own time does not count as activity.
 */
export function startIdleMemoryReducer(options: IdleMemoryOptions): IdleMemoryReducer {
  const gc = options.windowMs > 0 ? garbageCollector() : null;
  if (!gc) return { stop: () => undefined };
  const quiet = options.quietUtilization ?? 0.02;
  let busySinceLastReduction = true;
  let windowStart: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, windowStart);
    windowStart = now;
    if (utilization > quiet) {
      busySinceLastReduction = true;
      return;
    }
    if (!busySinceLastReduction) return;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    busySinceLastReduction = false;
    options.onReduced?.();
    windowStart = performance.eventLoopUtilization();
  }, options.windowMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
