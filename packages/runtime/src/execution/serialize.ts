/**
 * JSON as the anchors put it on the wire: LangChain messages become plain dicts `{...fields, type}` instead of
 * their `lc` constructor form. Messages come from the application's own @langchain/core, so they are recognised by
 * shape (`toDict` and `getType`).
 */
export interface MessageLike {
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

// Deeper than this, the slow path decides (and reports a cycle exactly as JSON.stringify does).
const MAX_DEPTH = 64;

class TooDeep extends Error {}

/**
 * `value` with every message turned into its dict, as the replacer would, sharing every subtree that needs no change.
 * A replacer function makes V8 leave its fast JSON path and call into JS for every key (a visible share of a run's
 * CPU), so messages are converted first and the result is stringified without one.
 */
function withMessagesAsDicts(value: unknown, key: string, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (isMessage(value)) {
    const { type, data } = value.toDict();
    return withMessagesAsDicts({ ...data, type }, key, depth + 1);
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return withMessagesAsDicts((value as { toJSON: (key: string) => unknown }).toJSON(key), key, depth + 1);
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let index = 0; index < value.length; index += 1) {
      const item = value[index];
      const converted = withMessagesAsDicts(item, String(index), depth + 1);
      if (converted !== item) (copy ??= value.slice())[index] = converted;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  for (const field of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[field];
    const converted = withMessagesAsDicts(item, field, depth + 1);
    if (converted !== item) (copy ??= { ...(value as Record<string, unknown>) })[field] = converted;
  }
  return copy ?? value;
}

/** Compact JSON of `value` with messages as dicts. */
export function toWireJson(value: unknown): string {
  try {
    return JSON.stringify(withMessagesAsDicts(value, '', 0)) ?? 'null';
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    // The top-level value reaches the replacer under key "" of a wrapper object, so a bare message converts too.
    return JSON.stringify(value, replacer) ?? 'null';
  }
}

/**
 * The wire JSON of an event's data made on its way to the database (RunEvents.publish), kept for the SSE frame that
 * writes the same event next (http/sse.ts): a streamed run on a thread serialised each event twice, and a `values`
 * event carries the whole message list (~1 ms of a turn's CPU on a thread of 200 messages). Taken once: the entry
 * lives from the publish to the frame, not as long as the event is kept for joins.
 */
const wireJsonOfEvent = new WeakMap<object, string>();

export function keepWireJson(event: object, json: string): void {
  wireJsonOfEvent.set(event, json);
}

/** The JSON kept for `event` (and forgotten), if any. */
export function takeWireJson(event: object): string | undefined {
  const json = wireJsonOfEvent.get(event);
  if (json !== undefined) wireJsonOfEvent.delete(event);
  return json;
}
