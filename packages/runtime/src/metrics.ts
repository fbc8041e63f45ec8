/**
 * The deployed application's series (served at its own `GET /metrics`): runs started, finished and failed and run
 * latency per assistant (graph id, bounded by graphx.json), active SSE streams. Runs are the benchmarked hot path
 * (bench/runtime.ts): the per-assistant children are looked up once and cached, so a run costs a few increments.
 */
import type * as PromClient from 'prom-client';
import { Counter, Gauge, Histogram, type Registry } from '@graphx/kit/http/promClient';
import { createMetricsRegistry, HttpMetrics, LATENCY_BUCKETS } from '@graphx/kit/http/metrics';

/** What one assistant's runs increment. */
interface AssistantSeries {
  started: PromClient.Counter.Internal;
  failed: PromClient.Counter.Internal;
  finished: Map<string, PromClient.Counter.Internal>;
  duration: PromClient.Histogram.Internal<'assistant'>;
}

export class RuntimeMetrics {
  readonly registry: Registry;
  readonly http: HttpMetrics;
  readonly activeStreams: Gauge;
  readonly idleCollections: Counter;
  private readonly started: Counter<'assistant'>;
  private readonly finished: Counter<'assistant' | 'status'>;
  private readonly failed: Counter<'assistant'>;
  private readonly duration: Histogram<'assistant'>;
  private readonly byAssistant = new Map<string, AssistantSeries>();

  constructor() {
    this.registry = createMetricsRegistry('runtime');
    const registers = [this.registry];
    this.http = new HttpMetrics(this.registry);
    this.activeStreams = new Gauge({
      name: 'graphx_active_sse_streams',
      help: 'Server-sent event streams (streamed runs) open right now.',
      registers,
    });
    this.idleCollections = new Counter({
      name: 'graphx_runtime_idle_collections_total',
      help: 'Collections run when the instance went quiet, giving its young generation back (idleMemory.ts).',
      registers,
    });
    this.started = new Counter({
      name: 'graphx_runs_started_total',
      help: 'Runs started, by assistant (graph id).',
      labelNames: ['assistant'],
      registers,
    });
    this.finished = new Counter({
      name: 'graphx_runs_finished_total',
      help: 'Runs ended, by assistant and final status (success, error, interrupted).',
      labelNames: ['assistant', 'status'],
      registers,
    });
    this.failed = new Counter({
      name: 'graphx_runs_failed_total',
      help: 'Runs that ended in error, by assistant.',
      labelNames: ['assistant'],
      registers,
    });
    this.duration = new Histogram({
      name: 'graphx_run_duration_seconds',
      help: 'Time from a run being accepted to its end, by assistant.',
      labelNames: ['assistant'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  /** Counts a run that starts. */
  runStarted(assistant: string): void {
    this.series(assistant).started.inc();
  }

  /** Counts a run that ended with `status` after it was accepted at `startedAtMs` (epoch ms). */
  runFinished(assistant: string, status: string, startedAtMs: number): void {
    const series = this.series(assistant);
    let finished = series.finished.get(status);
    if (!finished) series.finished.set(status, (finished = this.finished.labels({ assistant, status })));
    finished.inc();
    if (status === 'error') series.failed.inc();
    series.duration.observe((Date.now() - startedAtMs) / 1000);
  }

  private series(assistant: string): AssistantSeries {
    let series = this.byAssistant.get(assistant);
    if (!series) {
      series = {
        started: this.started.labels({ assistant }),
        failed: this.failed.labels({ assistant }),
        finished: new Map(),
        duration: this.duration.labels({ assistant }),
      };
      // Zero series exist from the first run on, so a rate() over "failed" is defined before the first failure.
      this.failed.inc({ assistant }, 0);
      this.byAssistant.set(assistant, series);
    }
    return series;
  }
}
