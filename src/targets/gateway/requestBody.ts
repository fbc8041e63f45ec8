/**
 * A request body forwarded to an upstream that can be replayed to another one if the first connection fails.
 * Agent-server bodies are mostly small JSON, so up to MAX_REPLAY_BYTES are kept; a bigger body still streams through
 * but a failed attempt with it is not retried. A body growing past `limitBytes` (one sent without a Content-Length)
 * stops being forwarded and `onTooLarge` runs; the rest is read and dropped.
 */
import type http from 'node:http';

const MAX_REPLAY_BYTES = 1024 * 1024;

export class RequestBody {
  private chunks: Buffer[] = [];
  private size = 0;
  private overflow = false;
  private ended = false;
  private target: http.ClientRequest | null = null;
  private total = 0;
  private tooLarge = false;

  constructor(
    private readonly req: http.IncomingMessage,
    private readonly limitBytes = Number.POSITIVE_INFINITY,
    private readonly onTooLarge: (upstream: http.ClientRequest | null) => void = () => {},
  ) {
    req.pause();
    req.on('data', (chunk: Buffer) => {
      if (this.tooLarge) return;
      this.total += chunk.length;
      if (this.total > this.limitBytes) {
        this.tooLarge = true;
        this.chunks = [];
        this.overflow = true;
        const target = this.target;
        this.target = null;
        this.onTooLarge(target);
        req.resume();
        return;
      }
      if (!this.overflow) {
        this.chunks.push(chunk);
        this.size += chunk.length;
        if (this.size > MAX_REPLAY_BYTES) {
          this.overflow = true;
          this.chunks = [];
        }
      }
      if (this.target && !this.target.write(chunk)) {
        req.pause();
        this.target.once('drain', () => req.resume());
      }
    });
    req.on('end', () => {
      this.ended = true;
      this.target?.end();
    });
  }

  /** True once the body grew past the limit (onTooLarge has run). */
  get exceeded(): boolean {
    return this.tooLarge;
  }

  /** True when every byte read so far is still held, so a new attempt can send the whole body. */
  replayable(): boolean {
    return !this.overflow;
  }

  /** Sends what was read so far to `target`, then streams the rest. */
  attach(target: http.ClientRequest): void {
    this.target = target;
    for (const chunk of this.chunks) target.write(chunk);
    if (this.ended) target.end();
    else this.req.resume();
  }

  /** Stops feeding `target` for good: the rest of the body is read and dropped (its answer has been relayed). */
  discardRest(target: http.ClientRequest): void {
    if (this.target !== target) return;
    this.target = null;
    this.chunks = [];
    this.overflow = true;
    this.req.resume();
  }

  /** Stops feeding a failed upstream; the rest of the body waits for the next attach. */
  detach(target: http.ClientRequest): void {
    if (this.target !== target) return;
    this.target = null;
    if (!this.ended) this.req.pause();
  }
}
