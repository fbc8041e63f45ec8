/**
 * prom-client's registry and metric classes, required file by file instead of through its index: the index also
 * requires its Pushgateway (https, so tls and OpenSSL's setup, and zlib) and its cluster aggregator, ~6 MB resident on
 * Node 24 in every process that only counts and answers `/metrics` (an agent server whose app never makes an https
 * request). The files are prom-client 15's `lib/`; they are the very objects the index exports (the index requires the
 * same files), so metrics made here and through the index mix (test: packages/kit/test/promClient.test.ts). Types: the index's.
 *
 * The default metrics are prom-client's own modules too, but for one: `process_cpu_*_seconds_total` is counted here,
 * because prom-client's module requires OpenTelemetry's API (51 modules, ~0.5 MB of heap in every process) for the
 * exemplars graphx never enables. The same three counters, names and help; the test compares the whole scrape's
 * metric names, types and help with the index's `collectDefaultMetrics`.
 */
import type * as PromClient from 'prom-client';

const lib = (file: string): unknown => require(`prom-client/lib/${file}`);

export const Registry = lib('registry') as typeof PromClient.Registry;
export const Counter = lib('counter') as typeof PromClient.Counter;
export const Gauge = lib('gauge') as typeof PromClient.Gauge;
export const Histogram = lib('histogram') as typeof PromClient.Histogram;

type DefaultMetric = (registry: Registry | undefined, config: Record<string, unknown>) => void;

/** prom-client 15's default metrics (lib/defaultMetrics.js) but `processCpuTotal`, which processCpuSeconds replaces. */
const DEFAULT_METRIC_FILES = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  ...(typeof (process as { getActiveResourcesInfo?: unknown }).getActiveResourcesInfo === 'function' ? ['processResources'] : []),
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
];

/** `process_cpu_user_seconds_total`, `…_system_…` and `process_cpu_seconds_total`, as prom-client counts them. */
function processCpuSeconds(registry: Registry | undefined, config: { prefix?: string; labels?: Record<string, string> }) {
  const registers = registry ? [registry] : undefined;
  const prefix = config.prefix ?? '';
  const labels = config.labels ?? {};
  const labelNames = Object.keys(labels);
  let last = process.cpuUsage();
  const system = new Counter({
    name: `${prefix}process_cpu_system_seconds_total`,
    help: 'Total system CPU time spent in seconds.',
    registers,
    labelNames,
  });
  const total = new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: 'Total user and system CPU time spent in seconds.',
    registers,
    labelNames,
  });
  // Registered first, as prom-client does: its `collect` sets all three before any of them is read.
  new Counter({
    name: `${prefix}process_cpu_user_seconds_total`,
    help: 'Total user CPU time spent in seconds.',
    registers,
    labelNames,
    collect() {
      const now = process.cpuUsage();
      const user = now.user - last.user;
      const sys = now.system - last.system;
      last = now;
      this.inc(labels, user / 1e6);
      system.inc(labels, sys / 1e6);
      total.inc(labels, (user + sys) / 1e6);
    },
  });
}

/** prom-client's `collectDefaultMetrics` (same metrics, same options), without OpenTelemetry's API. */
export const collectDefaultMetrics = ((
  config: PromClient.DefaultMetricsCollectorConfiguration<'text/plain; version=0.0.4; charset=utf-8'> = {},
) => {
  const options = { eventLoopMonitoringPrecision: 10, ...config } as Record<string, unknown> & {
    register?: Registry;
    prefix?: string;
    labels?: Record<string, string>;
  };
  const registry = options.register;
  processCpuSeconds(registry, options);
  for (const file of DEFAULT_METRIC_FILES) (lib(`metrics/${file}`) as DefaultMetric)(registry, options);
}) as typeof PromClient.collectDefaultMetrics;

export type Registry = PromClient.Registry;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
