/**
 * @graphx/kit/http/promClient requires prom-client's files one by one (its index requires https and cluster for
 * features graphx does not use): what it exports are the index's own objects, so metrics made either way mix.
 */
import * as fromIndex from 'prom-client';
import * as fromFiles from '../src/http/promClient';

test("the file-by-file exports are prom-client's own classes and default metrics", async () => {
  for (const name of ['Registry', 'Counter', 'Gauge', 'Histogram', 'collectDefaultMetrics'] as const) {
    expect(fromFiles[name]).toBe(fromIndex[name]);
  }
  const registry = new fromFiles.Registry();
  fromFiles.collectDefaultMetrics({ register: registry });
  new fromIndex.Counter({ name: 'made_through_the_index_total', help: 'h', registers: [registry] }).inc(2);
  new fromFiles.Histogram({ name: 'made_from_the_files_seconds', help: 'h', buckets: [1], registers: [registry] }).observe(0.5);
  const text = await registry.metrics();
  expect(text).toContain('made_through_the_index_total 2');
  expect(text).toContain('made_from_the_files_seconds_bucket{le="1"} 1');
  expect(text).toMatch(/^nodejs_heap_size_total_bytes \d+/m);
});
