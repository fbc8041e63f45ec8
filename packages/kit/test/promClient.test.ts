/**
 * @graphx/kit/http/promClient requires prom-client's files one by one (its index requires https and cluster for
 * features graphx does not use): what it exports are the index's own classes, so metrics made either way mix, and its
 * default metrics are the index's, counted without OpenTelemetry's API.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import * as fromIndex from 'prom-client';
import * as fromFiles from '../src/http/promClient';

const run = promisify(execFile);

test("the file-by-file exports are prom-client's own classes", async () => {
  for (const name of ['Registry', 'Counter', 'Gauge', 'Histogram'] as const) {
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

/** `# HELP` and `# TYPE` lines of a scrape, and its sample names without values. */
function shape(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (line.startsWith('#') ? line : line.replace(/ [^ ]+$/, '')))
    .sort();
}

test("the default metrics are the index's, and the process CPU counters count this process's CPU", async () => {
  const ours = new fromFiles.Registry();
  ours.setDefaultLabels({ server: 'x' });
  fromFiles.collectDefaultMetrics({ register: ours, prefix: 'p_', labels: { l: 'v' } });
  const theirs = new fromIndex.Registry();
  theirs.setDefaultLabels({ server: 'x' });
  fromIndex.collectDefaultMetrics({ register: theirs, prefix: 'p_', labels: { l: 'v' } });
  // The event-loop and GC series depend on timing: compare the metric set (names, types, help) and every sample name.
  const [a, b] = [shape(await ours.metrics()), shape(await theirs.metrics())];
  const names = (lines: string[]) => [...new Set(lines.filter((line) => line.startsWith('#')))];
  expect(names(a)).toEqual(names(b));
  expect(names(a)).toContain('# TYPE p_process_cpu_user_seconds_total counter');

  const cpu = async () => {
    const values = (await ours.getMetricsAsJSON()).filter((metric) => metric.name.startsWith('p_process_cpu'));
    // Copied: prom-client hands out its own value objects, which the next collection changes.
    return Object.fromEntries(values.map((metric) => [metric.name, { ...metric.values[0]! }]));
  };
  const before = await cpu();
  const busyUntil = Date.now() + 60;
  while (Date.now() < busyUntil); // ~60 ms of user CPU
  const after = await cpu();
  expect(after.p_process_cpu_user_seconds_total!.labels).toEqual({ l: 'v', server: 'x' });
  const grown = (name: string) => after[name]!.value - before[name]!.value;
  expect(grown('p_process_cpu_user_seconds_total')).toBeGreaterThan(0.03);
  expect(grown('p_process_cpu_seconds_total')).toBeCloseTo(
    grown('p_process_cpu_user_seconds_total') + grown('p_process_cpu_system_seconds_total'),
    6,
  );
});

test('a process that collects the default metrics loads neither https nor OpenTelemetry', async () => {
  const script = `
    const { Registry, collectDefaultMetrics } = require(${JSON.stringify(path.join(__dirname, '..', 'src', 'http', 'promClient.ts'))});
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    registry.metrics().then((text) => {
      const loaded = Object.keys(require.cache);
      console.log(JSON.stringify({
        otel: loaded.some((file) => file.includes('@opentelemetry')),
        https: process.moduleLoadList.includes('NativeModule https'),
        cpu: /process_cpu_seconds_total \\d/.test(text),
      }));
    });`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], { cwd: path.join(__dirname, '..') });
  expect(JSON.parse(stdout)).toEqual({ otel: false, https: false, cpu: true });
});
