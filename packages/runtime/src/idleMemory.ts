/**
 * Gives the young generation back when the server has gone quiet. A container instance runs with 16 MB semi-spaces
 * (src/pipeline/runtimeEnv.ts: 20–45 % less CPU per run under load), and V8 keeps both semi-spaces committed, used or
 * not, after a start or light traffic: ~20 MB of an idle app's RSS on Node 22/24 (decisions.md "Idle RSS of a Python
 * app"). V8 shrinks them in its memory reducer's collections, which only heavy traffic arms (idleMemory.test.ts saw it
 * after a second of back-to-back runs), or in a "last resort" collection, which nothing triggers in a server that just
 * waits; this runs one after a busy spell is followed by a quiet one, and the semi-spaces grow back under load.
 */
import { performance } from 'node:perf_hooks';
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
  /**
   * A window whose event loop was busy for at most this share of it is quiet (timers, lease renewals and pool pings are
   * ~0.1 %): busy in wall time (its utilisation) or, where Node measures it (`process.threadCpuUsage`: Node 24 has it, 20
   * does not), in the main thread's CPU time, whichever is less. On a contended host the loop's wall time stretches while
   * the process waits for a core (an idle instance in CI, beside other test processes, never looked quiet); its CPU
   * time does not.
   */
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
  const threadCpuMs = mainThreadCpuMs();
  /** Where a window starts: the loop's utilisation so far, the main thread's CPU time, the time. */
  const mark = () => ({ loop: performance.eventLoopUtilization(), cpuMs: threadCpuMs?.() ?? 0, at: performance.now() });
  let busySinceLastReduction = true;
  let windowStart = mark();
  const timer = setInterval(() => {
    const end = mark();
    const { utilization } = performance.eventLoopUtilization(end.loop, windowStart.loop);
    const cpuShare = threadCpuMs ? (end.cpuMs - windowStart.cpuMs) / Math.max(1, end.at - windowStart.at) : utilization;
    windowStart = end;
    if (Math.min(utilization, cpuShare) > quiet) {
      busySinceLastReduction = true;
      return;
    }
    if (!busySinceLastReduction) return;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    busySinceLastReduction = false;
    options.onReduced?.();
    // The collection's own time is not the next window's activity.
    windowStart = mark();
  }, options.windowMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** The main thread's CPU time so far in ms, where Node measures it (24 does); null elsewhere (Node 20). */
function mainThreadCpuMs(): (() => number) | null {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (typeof usage !== 'function') return null;
  return () => {
    const { user, system } = usage.call(process);
    return (user + system) / 1000;
  };
}
