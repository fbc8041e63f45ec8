/**
 * The control plane's own series, read from the database when Prometheus scrapes (one grouped query per scrape, so
 * every API process reports the same totals and nothing has to be kept in step with the pipeline).
 */
import { Gauge, type Registry } from 'prom-client';
import { REVISION_STATUSES } from '@graphx/contract/statuses';
import type { Db } from '../db/knex';

/** Statuses of revisions that wait for the build queue (in the deployment's queue, or for a build slot). */
const WAITING_FOR_BUILD = new Set(['QUEUED', 'AWAITING_BUILD']);

/** Registers `graphx_revisions` (by status) and `graphx_build_queue_depth` on `registry`. */
export function registerControlPlaneMetrics(registry: Registry, db: Db): void {
  let pending: Promise<Map<string, number>> | null = null;
  // Both gauges are filled from one query; a scrape collects them one after the other, so they share its result.
  const countsByStatus = () =>
    (pending ??= (async () => {
      try {
        const rows: Array<{ status: string; count: string }> = await db('revisions')
          .select('status')
          .count({ count: '*' })
          .groupBy('status');
        return new Map(rows.map((row) => [row.status, Number(row.count)]));
      } finally {
        setImmediate(() => (pending = null));
      }
    })());

  new Gauge({
    name: 'graphx_revisions',
    help: 'Revisions by status, all tenants.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = await countsByStatus();
      for (const status of REVISION_STATUSES) this.set({ status }, counts.get(status) ?? 0);
    },
  });
  new Gauge({
    name: 'graphx_build_queue_depth',
    help: 'Revisions waiting to be built (QUEUED behind another revision, or AWAITING_BUILD a build slot).',
    registers: [registry],
    async collect() {
      const counts = await countsByStatus();
      let waiting = 0;
      for (const [status, count] of counts) if (WAITING_FOR_BUILD.has(status)) waiting += count;
      this.set(waiting);
    },
  });
}
