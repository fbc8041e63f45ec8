/**
 * A deployment's `source_config.custom_url` is an extra host the gateway routes to it (issue 24, point 7): one host,
 * one live deployment, whatever the tenant. The gateway matches the same expression (src/targets/gateway/routeTable.ts).
 */
import type { Knex } from 'knex';

/**
 * The host of `<table>.source_config.custom_url`, lowercase, without user, port, path, query or fragment. Written
 * without a question mark (chr(63)): knex reads one in raw SQL as a binding.
 */
export function customUrlHostSql(table = ''): string {
  const url = `${table ? `${table}.` : ''}source_config->>'custom_url'`;
  const authority = `split_part(split_part(translate(${url}, chr(63) || '#', '//'), '://', 2), '/', 1)`;
  return `lower(split_part(regexp_replace(${authority}, '^.*@', ''), ':', 1))`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE UNIQUE INDEX deployments_custom_url_host_live ON deployments ((${customUrlHostSql()})) ` +
      `WHERE deleted_at IS NULL AND source_config->>'custom_url' IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS deployments_custom_url_host_live');
}
