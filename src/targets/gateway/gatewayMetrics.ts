/** The gateway's series about what it routes to, read from `local_instances` when Prometheus scrapes. */
import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../../db/knex';

/** Registers `graphx_deployment_instances` (serving instances per live deployment) on `registry`. */
export function registerGatewayMetrics(registry: Registry, db: Db): void {
  new Gauge({
    name: 'graphx_deployment_instances',
    help: 'Serving application instances per live deployment (labelled by its gateway path).',
    labelNames: ['deployment'],
    registers: [registry],
    async collect() {
      const rows: Array<{ deployment: string; count: string }> = await db('deployments as d')
        .join('local_instances as i', 'i.deployment_id', 'd.id')
        .where('i.status', 'serving')
        .whereNull('d.deleted_at')
        .groupByRaw('coalesce(d.route_key, d.name)')
        .select(db.raw('coalesce(d.route_key, d.name) as deployment'))
        .count({ count: '*' });
      // Deleted deployments must drop out of the scrape, not stay at their last value.
      this.reset();
      for (const row of rows) this.set({ deployment: row.deployment }, Number(row.count));
    },
  });
}
