/**
 * prom-client's registry and metric classes, required file by file instead of through its index: the index also
 * requires its Pushgateway (https, so tls and OpenSSL's setup, and zlib) and its cluster aggregator, ~6 MB resident on
 * Node 24 in every process that only counts and answers `/metrics` (an agent server whose app never makes an https
 * request). The files are prom-client 15's `lib/`; they are the very objects the index exports (the index requires the
 * same files), so metrics made here and through the index mix (test: packages/kit/test/promClient.test.ts). Types: the index's.
 */
import type * as PromClient from 'prom-client';

const lib = (file: string): unknown => require(`prom-client/lib/${file}`);

export const Registry = lib('registry') as typeof PromClient.Registry;
export const Counter = lib('counter') as typeof PromClient.Counter;
export const Gauge = lib('gauge') as typeof PromClient.Gauge;
export const Histogram = lib('histogram') as typeof PromClient.Histogram;
export const collectDefaultMetrics = lib('defaultMetrics') as typeof PromClient.collectDefaultMetrics;

export type Registry = PromClient.Registry;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
