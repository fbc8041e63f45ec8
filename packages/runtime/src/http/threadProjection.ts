/**
 * `select` and `extract` of a thread search (the Python server's): `select` keeps only the named fields of each thread;
 * `extract` maps an alias to a path into the thread (`values.messages[-1]`, `metadata.owner`: dotted keys and
 * `[n]` indexes, negative from the end) and returns the found values under `extracted` (null where the path leads
 * nowhere), so a sidebar reads the last message without every thread's whole state.
 */
export const THREAD_FIELDS = [
  'thread_id',
  'created_at',
  'updated_at',
  'metadata',
  'status',
  'config',
  'values',
  'interrupts',
  'error',
];
export const EXTRACT_PATH = /^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[-?\d+\])*$/;

function at(value: unknown, path: string): unknown {
  let current = value;
  for (const [, key, index] of path.matchAll(/\.?([A-Za-z_][\w-]*)|\[(-?\d+)\]/g)) {
    if (current === null || current === undefined) return null;
    if (key !== undefined)
      current = typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>)[key] : undefined;
    else current = Array.isArray(current) ? current.at(Number(index)) : undefined;
  }
  return current ?? null;
}

export function projectThread(
  thread: Record<string, unknown>,
  select: string[] | undefined,
  extract: Record<string, string> | undefined,
): Record<string, unknown> {
  const base = select
    ? Object.fromEntries(select.filter((field) => field in thread).map((field) => [field, thread[field]]))
    : { ...thread };
  if (extract) base.extracted = Object.fromEntries(Object.entries(extract).map(([alias, path]) => [alias, at(thread, path)]));
  return base;
}
