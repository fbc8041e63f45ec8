/**
 * Whole lines out of a stream of text chunks. An engine's progress events (a build's `stream` field, a log read)
 * end wherever the writer's buffer happened to end, not at a newline: splitting each event by itself cuts a line
 * in two whenever a chunk ends mid-line, which happens under load, and a message searched for in the build log
 * (or shown to a user) arrives as two fragments. The tail after the last newline waits for the next chunk.
 */
export class LineAssembler {
  private pending = '';

  constructor(private readonly onLine: (line: string) => void) {}

  /** Adds a chunk; hands every line it completes to `onLine`, without its `\n` or `\r\n`. */
  push(chunk: string): void {
    const parts = (this.pending + chunk).split('\n');
    this.pending = parts.pop() ?? '';
    for (const part of parts) this.onLine(part.replace(/\r$/, ''));
  }

  /** The stream ended: a last line without a newline is still a line. */
  end(): void {
    const rest = this.pending;
    this.pending = '';
    if (rest) this.onLine(rest.replace(/\r$/, ''));
  }
}
