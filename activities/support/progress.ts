/**
 * What a long activity tells the world while it runs: heartbeats (at most every second, details `{phase, lastLines}`
 * a person can read in the Temporal UI) and the revision's log lines (`revision_logs`, written in batches).
 * Secret values are masked before a line goes anywhere: heartbeat details and failure messages are stored in the
 * workflow history.
 */
import { Context } from '@temporalio/activity';
import type { Db } from '../../src/db/knex';
import { RevisionRepository } from '../../src/db/repositories/revisions';
import { logger } from '@graphx/kit/logger';

const KEPT_LINES = 20;
const FLUSH_LINES = 200;
const MAX_LINE = 4000;
/** Flushes a batch of log lines may fail (one a second) before it is dropped. */
const FLUSH_TRIES = 10;
/** Pauses between the last tries of the step's remaining lines at close. */
const CLOSE_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000];

export interface HeartbeatDetails {
  phase: string;
  lastLines: string[];
  /** The revision's image once built or pulled (container runner). */
  image?: { ref: string; digest: string | null };
}

export class StepProgress {
  private phase = 'starting';
  private lastActivity = Date.now();
  private image: HeartbeatDetails['image'];
  private readonly recent: string[] = [];
  private pending: Array<{ revision_id: string; level: string; message: string }> = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private secrets: string[];
  private failedFlushes = 0;

  constructor(
    private readonly db: Db,
    private readonly revisionId: string,
    secretValues: string[] = [],
  ) {
    // Longest first, so a secret containing another is masked whole.
    this.secrets = secretValues.filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
    this.timer = setInterval(() => {
      this.heartbeat();
      void this.flush();
    }, 1000);
  }

  /** Also masks `value` from now on (a token fetched during the step). */
  addSecret(value: string): void {
    if (value.length >= 4) this.secrets = [...this.secrets, value].sort((a, b) => b.length - a.length);
  }

  /** Masks every secret value in `text`. */
  redact(text: string): string {
    let result = text;
    for (const secret of this.secrets) result = result.split(secret).join('********');
    return result;
  }

  /** Enters a phase (logged as a line of its own when `message` is given) and heartbeats at once. */
  setPhase(phase: string, message?: string): void {
    this.phase = phase;
    this.lastActivity = Date.now();
    if (message) this.line(message);
    this.heartbeat();
  }

  /** Names the revision's image in every later heartbeat (and heartbeats at once). */
  setImage(image: { ref: string; digest: string | null }): void {
    this.image = image;
    this.heartbeat();
  }

  /** One line of output or of narration. */
  line(message: string, level = 'info'): void {
    this.lastActivity = Date.now();
    const clean = this.redact(message.length > MAX_LINE ? `${message.slice(0, MAX_LINE)}…` : message);
    this.recent.push(clean);
    if (this.recent.length > KEPT_LINES) this.recent.shift();
    this.pending.push({ revision_id: this.revisionId, level, message: clean });
    if (this.pending.length >= FLUSH_LINES) void this.flush();
  }

  /** The phase the step is in (`install`, `image`, …). */
  get currentPhase(): string {
    return this.phase;
  }

  /** When the step last printed a line or entered a phase (ms since the epoch). */
  get lastActivityAt(): number {
    return this.lastActivity;
  }

  /** Counts as progress without a line (the step's processes are working). */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** The last `count` non-empty lines. */
  lastLines(count = 10): string[] {
    return this.recent.filter((line) => line.trim() !== '').slice(-count);
  }

  heartbeat(): void {
    try {
      const details: HeartbeatDetails = {
        phase: this.phase,
        lastLines: this.lastLines(),
        ...(this.image ? { image: this.image } : {}),
      };
      Context.current().heartbeat(details);
    } catch {
      // Outside an activity (a direct call in a test): nothing to heartbeat to.
    }
  }

  /**
   * Writes the pending lines. A database hiccup never fails the step: the batch goes back in front of the pending
   * lines and the next flush (a second later, or at close) writes it; only a batch refused FLUSH_TRIES times is
   * dropped, with a warning, so a database that stays away cannot grow the worker's memory without bound.
   */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.pending;
      this.pending = [];
      if (batch.length === 0) return;
      try {
        await new RevisionRepository(this.db).insertLogRows(batch);
        this.failedFlushes = 0;
      } catch (error) {
        this.failedFlushes += 1;
        const dropping = this.failedFlushes >= FLUSH_TRIES;
        if (dropping) this.failedFlushes = 0;
        else this.pending = [...batch, ...this.pending];
        logger.warn(
          { err: error, revisionId: this.revisionId, lines: batch.length, dropped: dropping },
          dropping ? 'could not write revision log lines; dropped them' : 'could not write revision log lines; will retry',
        );
      }
    });
    return this.flushing;
  }

  /**
   * Stops heartbeating and writes what is left. A refused last batch is tried again with growing pauses (~8 s in all:
   * a database restarting at the step's end loses nothing); lines still refused after that are dropped with a
   * warning naming how many, never silently.
   */
  async close(retryDelaysMs: readonly number[] = CLOSE_RETRY_DELAYS_MS): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    for (const delay of retryDelaysMs) {
      if (this.pending.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
      await this.flush();
    }
    if (this.pending.length === 0) return;
    logger.warn(
      { revisionId: this.revisionId, lines: this.pending.length, dropped: true },
      'could not write revision log lines before the step ended; dropped them',
    );
    this.pending = [];
  }
}
