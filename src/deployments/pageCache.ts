/**
 * Whole pages of revisions as sent (GET revisions' body), each with the (id, row version) list it was made from (the
 * page query's text, RevisionRepository.pageOfTenant). A poll of an unchanged page finds its bytes here by its
 * parameters and answers them if the page query returned exactly that list: no view is joined, no text encoded. Any
 * change of a row (a new xmin), a new, deleted or reordered row gives another list, and the page is made again.
 * Bounded by count and by bytes, least recently used dropped first.
 */
interface CachedPage {
  versions: string;
  body: Buffer;
}

export class PageCache {
  private readonly pages = new Map<string, CachedPage>();
  private bytes = 0;

  constructor(
    private readonly maxPages: number,
    private readonly maxBytes: number,
  ) {}

  /** The body made from exactly `versions` (same ids, same row versions, same order), else undefined. */
  get(key: string, versions: string): Buffer | undefined {
    const page = this.pages.get(key);
    if (page === undefined || page.versions !== versions) return undefined;
    // Least recently used first in the map's order: a hit moves to the end.
    this.pages.delete(key);
    this.pages.set(key, page);
    return page.body;
  }

  set(key: string, versions: string, body: Buffer): void {
    this.drop(key);
    if (body.length > this.maxBytes) return;
    this.pages.set(key, { versions, body });
    this.bytes += body.length;
    for (const oldest of this.pages.keys()) {
      if (this.pages.size <= this.maxPages && this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const page = this.pages.get(key);
    if (page === undefined) return;
    this.pages.delete(key);
    this.bytes -= page.body.length;
  }
}
