/**
 * A list given in a query string, in any of the shapes clients send: repeated (`?m=a&m=b`), a JSON array (the JS
 * SDK's `?m=["a","b"]`) or one value. Undefined when absent or empty (the Python SDK sends `?m=` for None); a
 * malformed JSON array is left as is for validation to refuse.
 */
export function queryList(value: string | string[] | undefined): string | string[] | undefined {
  if (value === '') return undefined;
  if (typeof value !== 'string' || !value.startsWith('[')) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? (parsed as string[]) : value;
  } catch {
    return value;
  }
}
