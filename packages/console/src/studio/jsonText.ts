/** JSON typed in a textarea: parsed with a sentence that says which field is wrong. */
export function parseJsonField(label: string, text: string, fallback: unknown = undefined): unknown {
  if (text.trim() === '') return fallback;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${label} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Pretty JSON for display (as text, never markup). */
export function showJson(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
