/**
 * The build's no-progress watchdog. A build that stops making progress must fail with a message saying where, not
 * sit until the build time limit (15 min by default) with its activity heartbeating: the container runner's yarn
 * starter once waited forever after its dependency layer, with nothing running anywhere. Progress is a line of
 * output, a new phase, or CPU time used by the build's own processes (a silent `npm ci` is busy, not stuck); when
 * none of these happens for GRAPHX_BUILD_STALL_SECONDS, the build is stopped through the returned signal.
 */
import type { BuildProgress } from './builder';

export interface StallWatch {
  /** Aborted once the build made no progress for the limit; the build stops its steps on it. */
  signal: AbortSignal;
  /** Why the build was stopped, naming the phase and the last lines, once the signal fired; else null. */
  readonly message: string | null;
  stop: () => void;
}

export interface StallWatchOptions {
  limitSeconds: number;
  /** CPU time (any unit) used so far by the build's processes, or null while none can be seen. */
  cpuTicks?: () => number | null;
  /** How often to look (tests shorten it). */
  checkMs?: number;
}

/** Watches `progress` until `stop()`; see the file comment. */
export function watchForStall(progress: BuildProgress, options: StallWatchOptions): StallWatch {
  const controller = new AbortController();
  let message: string | null = null;
  let lastTicks: number | null = null;
  const check = () => {
    const ticks = options.cpuTicks?.() ?? null;
    // A change is progress, and so is a first reading: a step's processes appeared.
    if (ticks !== null && ticks !== lastTicks) progress.touch();
    lastTicks = ticks;
    const idleMs = Date.now() - progress.lastActivityAt;
    if (idleMs < options.limitSeconds * 1000) return;
    const last = progress.lastLines(5).join('\n') || '(no output yet)';
    message =
      `The build made no progress for ${options.limitSeconds} s (no output${options.cpuTicks ? ' and no CPU time used by its processes' : ''}; ` +
      `GRAPHX_BUILD_STALL_SECONDS) and was stopped in its "${progress.currentPhase}" phase, after:\n${last}`;
    clearInterval(timer);
    controller.abort(new Error(message));
  };
  const timer = setInterval(check, options.checkMs ?? Math.min(2000, (options.limitSeconds * 1000) / 4));
  timer.unref();
  return {
    signal: controller.signal,
    get message() {
      return message;
    },
    stop: () => clearInterval(timer),
  };
}
