/**
 * A non-tty container's log as the Docker Engine API sends it: frames of an 8-byte header (stream, 3 zero bytes,
 * big-endian length) then the payload. Pure functions over the bytes, so the framing rules are tested without an engine.
 */
import type { ContainerLogLine } from './engine';

/** The log's text, both streams in order. Unframed text (a tty container, or an engine that does not frame) is returned as it is. */
export function demultiplex(raw: Buffer): string {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= raw.length) {
    const kind = raw[offset];
    if ((kind !== 0 && kind !== 1 && kind !== 2) || raw.readUIntBE(offset + 1, 3) !== 0) return raw.toString('utf8');
    const length = raw.readUInt32BE(offset + 4);
    parts.push(raw.subarray(offset + 8, offset + 8 + length));
    offset += 8 + length;
  }
  return offset === 0 && raw.length > 0 ? raw.toString('utf8') : Buffer.concat(parts).toString('utf8');
}

/** The last `tail` lines of `text`, ending in a newline when `text` does. */
export function lastLogLines(text: string, tail: number): string {
  const lines = text.split('\n');
  const last = lines.at(-1) === '' ? lines.slice(0, -1) : lines;
  return last.slice(-tail).join('\n') + (text.endsWith('\n') ? '\n' : '');
}

/**
 * The lines of a log read with `timestamps: true`. A frame without a newline is part of a longer line (podman splits
 * lines it read in pieces), joined with the stream's next frames; an unfinished last line is left for the next read.
 */
export function timestampedLogLines(raw: Buffer): ContainerLogLine[] {
  const lines: ContainerLogLine[] = [];
  const open = new Map<number, ContainerLogLine>();
  let offset = 0;
  while (offset + 8 <= raw.length) {
    const kind = raw[offset] as number;
    const length = raw.readUInt32BE(offset + 4);
    const frame = raw.subarray(offset + 8, offset + 8 + length).toString('utf8');
    offset += 8 + length;
    const space = frame.indexOf(' ');
    const second = Math.floor(Date.parse(frame.slice(0, space)) / 1000);
    const text = frame.slice(space + 1);
    const pending = open.get(kind) ?? { stream: kind === 2 ? 'stderr' : 'stdout', second, text: '' };
    pending.text += text;
    if (!text.endsWith('\n')) {
      open.set(kind, pending);
      continue;
    }
    open.delete(kind);
    for (const part of pending.text.slice(0, -1).split('\n')) lines.push({ ...pending, text: part.replace(/\r$/, '') });
  }
  return lines;
}
