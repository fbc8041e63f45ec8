/**
 * Push webhooks of code-host integrations (issue 24, point 6): the secret a code-hosting app signs its webhook
 * deliveries with (one per app, that is per provider), and the deliveries already acted on, so a redelivered event
 * creates nothing new.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_providers', (t) => {
    t.text('webhook_secret_encrypted').nullable().comment('AES-256-GCM; the secret its webhook deliveries are signed with.');
  });
  await knex.schema.createTable('codehost_push_deliveries', (t) => {
    t.comment('Webhook deliveries of a provider already handled (its delivery id, e.g. X-GitHub-Delivery).');
    t.uuid('provider_pk').notNullable().references('oauth_providers.id').onDelete('CASCADE');
    t.string('delivery_id', 200).notNullable().comment('The code host id of the delivery; a redelivery repeats it.');
    t.integer('revisions_created').notNullable().comment('How many revisions the delivery created.');
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['provider_pk', 'delivery_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('codehost_push_deliveries');
  await knex.schema.alterTable('oauth_providers', (t) => {
    t.dropColumn('webhook_secret_encrypted');
  });
}
