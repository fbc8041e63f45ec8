/**
 * Delivers the trace outbox to the control plane in batches. It runs when new records were written and on a slow
 * timer (records left by an instance that died, or a control plane that was down); never on the request path.
 */
import { logger } from '@graphx/kit/logger';
import type { ControlPlaneClient } from '../controlPlaneClient';
import type { RunStore } from '../storage/runStore';

const BATCH_SIZE = 200;
const SWEEP_INTERVAL_MS = 15_000;

export class TraceShipper {
  private running: Promise<void> | null = null;
  private again = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(
    private readonly store: RunStore,
    private readonly controlPlane: ControlPlaneClient,
  ) {
    this.sweepTimer = setInterval(() => this.kick(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Asks for a delivery round; rounds never overlap within one process. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.deliver().finally(() => {
      this.running = null;
      if (this.again && this.failures === 0) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async deliver(): Promise<void> {
    for (;;) {
      let claimed: Awaited<ReturnType<RunStore['claimTraces']>> = [];
      try {
        claimed = await this.store.claimTraces(BATCH_SIZE);
        if (claimed.length === 0) return;
        await this.controlPlane.recordRuns(claimed);
        await this.store.deleteTraces(claimed.map((record) => record.run_id));
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        if (claimed.length > 0) await this.store.releaseTraces(claimed.map((record) => record.run_id)).catch(() => undefined);
        const delayMs = Math.min(500 * 2 ** (this.failures - 1), 30_000);
        logger.warn({ err: error, retryInMs: delayMs }, 'delivering run records to the control plane failed; will retry');
        if (!this.retryTimer) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.kick();
          }, delayMs);
          this.retryTimer.unref();
        }
        return;
      }
      if (claimed.length < BATCH_SIZE) return;
    }
  }

  /** One last delivery round, then stop the timers. */
  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.running) await this.running;
    if (this.failures === 0) {
      this.kick();
      await this.running;
    }
  }
}
