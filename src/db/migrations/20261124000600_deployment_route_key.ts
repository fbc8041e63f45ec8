/**
 * The path of a deployment behind the gateway. Names are unique per tenant only, but the gateway URL has no tenant:
 * `route_key` is the name when no other live deployment holds it, else the name with a short id suffix.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deployments', (t) => {
    t.string('route_key', 80).nullable().comment('First path segment at the gateway; unique among live deployments.');
  });
  await knex.raw(`UPDATE deployments SET route_key = name || CASE WHEN rn > 1 THEN '-' || substr(id::text, 1, 8) ELSE '' END
    FROM (SELECT id AS rid, row_number() OVER (PARTITION BY name ORDER BY created_at) AS rn FROM deployments WHERE deleted_at IS NULL) ranked
    WHERE deployments.id = ranked.rid`);
  await knex.raw('CREATE UNIQUE INDEX deployments_route_key_live ON deployments (route_key) WHERE deleted_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS deployments_route_key_live');
  await knex.schema.alterTable('deployments', (t) => {
    t.dropColumn('route_key');
  });
}
