/**
 * Exact pages over the library's PostgresStore, which matches a namespace prefix (or suffix) as text
 * (`namespace_path LIKE 'ali%'` also finds `alice`): its rows are checked label by label here, and when a check can drop
 * a row, the page is cut after checking from a scan that starts at offset 0 (as the anchor's authorized scan does).
 */
import { InputError } from '@graphx/kit/errors';

/** Rows read per scan step, and at most in all (beyond it the request is refused: narrow the prefix). */
export const SCAN_PAGE = 1000;
export const MAX_SCANNED = 10_000;

/** `namespace` starts with every label of `prefix`, whole. */
export const hasPrefix = (namespace: string[], prefix: readonly string[]): boolean =>
  prefix.length <= namespace.length && prefix.every((label, index) => namespace[index] === label);

/** `namespace` ends with every label of `suffix`, whole. */
export const hasSuffix = (namespace: string[], suffix: readonly string[]): boolean =>
  suffix.length <= namespace.length &&
  suffix.every((label, index) => namespace[namespace.length - suffix.length + index] === label);

/**
 * The rows `offset .. offset + limit` of those `keep` returns (it may map a row, or drop it with undefined), read from
 * the start in steps (the first of `firstStep` rows) until enough are kept or the rows end.
 * @throws InputError once MAX_SCANNED rows are read without filling the page.
 */
export async function scanPage<Row, Kept>(
  read: (limit: number, offset: number) => Promise<Row[]>,
  keep: (row: Row) => Kept | undefined,
  page: { limit: number; offset: number },
  firstStep = SCAN_PAGE,
): Promise<Kept[]> {
  const wanted = page.offset + page.limit;
  const kept: Kept[] = [];
  for (let scanned = 0, step = Math.min(firstStep, MAX_SCANNED); ; step = Math.min(SCAN_PAGE, MAX_SCANNED - scanned)) {
    const rows = await read(step, scanned);
    scanned += rows.length;
    for (const row of rows) {
      const value = keep(row);
      if (value !== undefined) kept.push(value);
    }
    if (kept.length >= wanted || rows.length < step) break;
    if (scanned >= MAX_SCANNED) {
      throw new InputError(
        `This store query read ${MAX_SCANNED} entries without filling the page: narrow the namespace or the filter.`,
      );
    }
  }
  return kept.slice(page.offset, wanted);
}
