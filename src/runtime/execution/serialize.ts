/**
 * JSON as the anchors put it on the wire: LangChain messages become plain dicts `{...fields, type}` instead of
 * their `lc` constructor form. Messages come from the application's own @langchain/core, so they are recognised by
 * shape (`toDict` and `getType`).
 */
interface MessageLike {
  id?: string;
  toDict(): { type: string; data: Record<string, unknown> };
  getType(): string;
  concat?: (other: unknown) => MessageLike;
}

/** True for a LangChain message (any copy of @langchain/core). */
export function isMessage(value: unknown): value is MessageLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as MessageLike).toDict === 'function' &&
    typeof (value as MessageLike).getType === 'function'
  );
}

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (isMessage(raw)) {
    const { type, data } = raw.toDict();
    return { ...data, type };
  }
  return value;
}

/** Compact JSON of `value` with messages as dicts. */
export function toWireJson(value: unknown): string {
  // The top-level value reaches the replacer under key "" of a wrapper object, so a bare message converts too.
  return JSON.stringify(value, replacer) ?? 'null';
}

/** Truncates a JSON text to `maxBytes` (tracing keeps inputs and outputs up to 64 KiB). */
export function truncateJson(json: string, maxBytes = 64 * 1024): unknown {
  if (json.length <= maxBytes / 4 || Buffer.byteLength(json) <= maxBytes) return JSON.parse(json);
  return `${Buffer.from(json).subarray(0, maxBytes).toString('utf8')}…[truncated]`;
}
