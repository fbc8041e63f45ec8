/**
 * A JSON value with every object's keys in the order PostgreSQL's jsonb keeps them: shorter keys (in UTF-8 bytes)
 * first, keys of one length by their bytes. A value stored as jsonb comes back in that order, so a copy put in it
 * serializes to the same text as the stored value read back (JavaScript still lists integer-like keys first, in both).
 */
export function inJsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inJsonbOrder);
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(source).sort(compareJsonbKeys)) {
    const entry = inJsonbOrder(source[key]);
    // An own `__proto__` (JSON.parse makes one) stays a key, as it is in the parsed row, not the object's prototype.
    if (key === '__proto__')
      Object.defineProperty(ordered, key, { value: entry, enumerable: true, writable: true, configurable: true });
    else ordered[key] = entry;
  }
  return ordered;
}

const ASCII = /^[\x00-\x7f]*$/;

function compareJsonbKeys(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length !== right.length ? left.length - right.length : Buffer.compare(left, right);
}
