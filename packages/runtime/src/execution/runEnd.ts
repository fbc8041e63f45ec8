/** How a run ended that needs its graph's state: at a static breakpoint, or with interrupts pending. */
import type { PreparedRun, RunRequest } from './runConfig';
import { interruptsOf } from './threadState';

/** True when the request sets static breakpoints. */
export function hasBreakpoints(request: RunRequest): boolean {
  const { interrupt_before: before, interrupt_after: after } = request;
  return Boolean((before && before.length > 0) || (after && after.length > 0));
}

/** A run that ended quietly at a static breakpoint: its graph has a next node. */
export async function stoppedAtBreakpoint(prepared: PreparedRun): Promise<boolean> {
  try {
    const config = { configurable: { thread_id: prepared.run.thread_id } };
    const snapshot = await (await prepared.graph.forRun(prepared.graphConfig, true)).getState(config);
    return snapshot.next.length > 0;
  } catch {
    return false;
  }
}

/** The interrupts an interrupted run left pending (empty when its state cannot be read). */
export async function pendingInterrupts(prepared: PreparedRun): Promise<Record<string, unknown>> {
  try {
    const config = { configurable: { thread_id: prepared.run.thread_id } };
    return interruptsOf(await (await prepared.graph.forRun(prepared.graphConfig, true)).getState(config));
  } catch {
    return {};
  }
}
