/**
 * A Map that holds at most `limit` entries: adding a new key to a full map drops the oldest (first inserted). For the
 * small per-process caches of hot reads (API keys, validated inputs, secret names, serialized views), where recency of
 * use matters less than a bound on memory.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    // Map keeps insertion order: the first key is the oldest.
    if (!this.has(key) && this.size >= this.limit) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
