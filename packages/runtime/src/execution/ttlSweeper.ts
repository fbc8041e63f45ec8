/**
 * Thread TTLs (the Python server's): every instance polls for threads past `expires_at` (`GRAPHX_RUNTIME_TTL_SWEEP_MS`,
 * default 60 s); the statement that takes one clears its expiry, so one instance acts on each. `delete` deletes the
 * thread as `DELETE /threads/{id}` does (checkpoints and crons with it); `keep_latest` keeps the thread and only its
 * newest checkpoint. A busy thread is left for the next sweep.
 */
import { logger } from '@graphx/kit/logger';
import type { ThreadStore } from '../storage/threadStore';

const BATCH = 100;

export class TtlSweeper {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      threads: ThreadStore;
      deleteThread: (threadId: string) => Promise<void>;
      pruneCheckpoints: (threadId: string) => Promise<void>;
      intervalMs: number;
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.deps.intervalMs);
    this.timer.unref();
  }

  sweep(): Promise<void> {
    return (this.sweeping ??= (async () => {
      try {
        for (const { threadId, strategy } of await this.deps.threads.takeExpired(BATCH)) {
          try {
            if (strategy === 'keep_latest') await this.deps.pruneCheckpoints(threadId);
            else await this.deps.deleteThread(threadId);
          } catch (error) {
            logger.warn({ err: error, threadId }, 'thread TTL not applied');
          }
        }
      } catch (error) {
        logger.warn({ err: error }, 'thread TTL sweep failed');
      } finally {
        this.sweeping = null;
      }
    })());
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }
}
