/**
 * The supervision both instance runners share (processes and containers): which instances this process watches, the
 * loop that copies their output into `app_logs` (one copy at a time per instance; the store makes it exactly once
 * across processes) and reports an instance that died on its own once, and the bookkeeping of stops under way so a
 * shutdown can hurry them. How an instance runs, stops and writes output is the subclass's.
 */
import type { InstanceRow } from '../../db/repositories/instances';

export interface SupervisionTiming {
  /** How often output is copied. */
  tickMs: number;
  /** Every how many ticks instances are checked for a death nobody caused. */
  deathCheckTicks: number;
}

export abstract class SupervisedInstances {
  protected readonly supervised = new Map<string, InstanceRow>();
  /** Instances being stopped (a drain may wait up to its timeout): a shutdown of the stack hurries them. */
  protected readonly stopping = new Map<string, InstanceRow>();
  private readonly copying = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticks = 0;

  constructor(
    private readonly timing: SupervisionTiming,
    private readonly onDeath?: (row: InstanceRow) => void,
  ) {}

  /** Copies the instance's output written since the store's cursor. */
  protected abstract copyOutputNow(row: InstanceRow): Promise<void>;
  /** True when the instance ended without being stopped by us (crash, OOM kill). */
  protected abstract hasDied(row: InstanceRow): Promise<boolean>;

  /** Takes over copying the output of an instance another (maybe dead) process started, and watches it. */
  supervise(row: InstanceRow): void {
    this.supervised.set(row.id, row);
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.timing.tickMs);
      this.timer.unref();
    }
  }

  /** Ids of the instances this process supervises. */
  supervisedIds(): string[] {
    return [...this.supervised.keys()];
  }

  /** Instances whose stop is under way (draining ones included). */
  stoppingRows(): InstanceRow[] {
    return [...this.stopping.values()];
  }

  /** Stops copying and watching (the instances keep running). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Copies new output of the instance into app_logs; a copy already running for it is joined, not doubled. */
  copyOutput(row: InstanceRow): Promise<void> {
    const running = this.copying.get(row.id);
    if (running) return running;
    const work = this.copyOutputNow(row).finally(() => this.copying.delete(row.id));
    this.copying.set(row.id, work);
    return work;
  }

  /** Runs `halt` as the instance's stop: forgotten first, listed as stopping meanwhile, its last output copied after. */
  protected async haltAndCopy(row: InstanceRow, halt: () => Promise<void>): Promise<void> {
    // Forgotten first: an exit we caused must not look like a crash to the supervision loop.
    this.supervised.delete(row.id);
    this.stopping.set(row.id, row);
    try {
      await halt();
    } finally {
      this.stopping.delete(row.id);
    }
    await this.copyOutput(row).catch(() => {});
  }

  private async tick(): Promise<void> {
    this.ticks += 1;
    for (const row of [...this.supervised.values()]) {
      await this.copyOutput(row).catch(() => {});
      // An instance that ended on its own is reported once (after its last output), then forgotten.
      if (this.ticks % this.timing.deathCheckTicks === 0 && this.supervised.has(row.id) && (await this.hasDied(row))) {
        this.supervised.delete(row.id);
        await this.copyOutput(row).catch(() => {});
        this.onDeath?.(row);
      }
    }
  }
}
