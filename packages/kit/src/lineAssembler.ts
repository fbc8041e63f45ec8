/**
 * Whole lines out of a stream of text chunks. An engine's progress events (a build's `stream` field, a log read)
 * end wherever the writer's buffer happened to end, not at a newline: splitting each event by itself cuts a line
 * in two whenever a chunk ends mid-line, which happens under load, and a message searched for in the build log
 * (or shown to a user) arrives as two fragments. The tail after the last newline waits for the next chunk.
 */
export class LineAssembler {
  /** The chunks of the line under way, joined once it ends: a line of many chunks costs its length, not its square. */
  private pending: string[] = [];

  constructor(private readonly onLine: (line: string) => void) {}

  /** Adds a chunk; hands every line it completes to `onLine`, without its `\n` or `\r\n`. */
  push(chunk: string): void {
    let newline = chunk.indexOf('\n');
    if (newline === -1) {
      if (chunk) this.pending.push(chunk);
      return;
    }
    let start = 0;
    if (this.pending.length > 0) {
      this.pending.push(chunk.slice(0, newline));
      this.emit(this.pending.join(''));
      this.pending = [];
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    while (newline !== -1) {
      this.emit(chunk.slice(start, newline));
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) this.pending.push(chunk.slice(start));
  }

  /** The stream ended: a last line without a newline is still a line. */
  end(): void {
    const rest = this.pending.join('');
    this.pending = [];
    if (rest) this.emit(rest);
  }

  private emit(line: string): void {
    this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}
