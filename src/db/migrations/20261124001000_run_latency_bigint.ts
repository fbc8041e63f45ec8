/**
 * A run's latency in milliseconds as bigint: a 32-bit column overflows after 24.8 days, and the run records' start and
 * end times are the app's to choose (any instant from 1970 to 9999), so an out-of-range latency must still be storable.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE tracing_runs ALTER COLUMN latency_ms TYPE bigint');
  await knex.raw("COMMENT ON COLUMN tracing_runs.latency_ms IS 'end_time minus start_time in milliseconds; null while running'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE tracing_runs ALTER COLUMN latency_ms TYPE integer USING least(latency_ms, 2147483647)::integer');
}
