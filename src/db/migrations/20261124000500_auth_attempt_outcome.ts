/** Authorization attempts remember their redirect URI and how they ended, so the exchange and `wait` can use them. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_attempts', (t) => {
    t.string('redirect_uri', 2000)
      .nullable()
      .comment('Sent in the authorization request; the code exchange must send the very same value.');
    t.string('failure_reason', 500).nullable().comment('Why a failed attempt failed, in a sentence; never a secret.');
    t.timestamp('finished_at', { useTz: true }).nullable().comment('When the attempt became completed or failed.');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_attempts', (t) => {
    t.dropColumn('redirect_uri');
    t.dropColumn('failure_reason');
    t.dropColumn('finished_at');
  });
}
