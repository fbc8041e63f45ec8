/** OAuth providers, authorization attempts, tokens and code-host integrations (auth service v2). */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_providers', (t) => {
    t.comment('OAuth provider definitions of a tenant.');
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('provider_id', 100).notNullable().comment('Slug chosen by the user; unique in the tenant.');
    t.string('name', 200).notNullable();
    t.string('client_id', 500).notNullable();
    t.text('client_secret_encrypted').nullable().comment('AES-256-GCM; never returned.');
    t.string('auth_url', 2000).notNullable();
    t.string('token_url', 2000).notNullable();
    t.boolean('uses_pkce').notNullable().defaultTo(false);
    t.string('code_challenge_method', 16).nullable();
    t.string('token_endpoint_auth_method', 32).notNullable();
    t.string('provider_type', 32).nullable().comment('vendor_a | vendor_b');
    t.string('mcp_server_url', 2000).nullable();
    t.boolean('is_dynamic_client').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'provider_id']);
  });

  await knex.schema.createTable('oauth_attempts', (t) => {
    t.comment('One authorization attempt: the state it is bound to and, with PKCE, the verifier (encrypted).');
    t.uuid('id').primary().comment('auth_id');
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('provider_pk').notNullable().references('oauth_providers.id').onDelete('CASCADE');
    t.jsonb('scopes').notNullable();
    t.text('pkce_verifier_encrypted').nullable();
    t.string('status', 16).notNullable().comment('pending | completed | failed');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable().comment('State is single use: set when consumed.');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('oauth_tokens', (t) => {
    t.comment('Tokens obtained by a completed attempt, encrypted.');
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('provider_pk').notNullable().references('oauth_providers.id').onDelete('CASCADE');
    t.uuid('attempt_id').nullable();
    t.text('access_token_encrypted').notNullable();
    t.text('refresh_token_encrypted').nullable();
    t.string('token_type', 32).nullable();
    t.jsonb('scopes').nullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('codehost_integrations', (t) => {
    t.comment('A code-hosting app installation, recorded only after a successful code exchange.');
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.uuid('provider_pk').notNullable().references('oauth_providers.id').onDelete('CASCADE');
    t.bigInteger('installation_id').notNullable();
    t.uuid('token_id').notNullable().references('oauth_tokens.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'provider_pk', 'installation_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['codehost_integrations', 'oauth_tokens', 'oauth_attempts', 'oauth_providers']) {
    await knex.schema.dropTableIfExists(table);
  }
}
