/** Tenants, API keys, deployments, revisions, their logs, tracing projects, the pipeline outbox. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenants', (t) => {
    t.comment('Organizations: every resource is scoped to one.');
    t.uuid('id').primary();
    t.string('name', 200).notNullable().unique().comment('Human name, e.g. "default".');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.comment('Control-plane API keys. Only a SHA-256 of the key is kept.');
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('key_hash', 64).notNullable().unique().comment('sha256(key) hex; the key itself is never stored.');
    t.string('key_prefix', 16).notNullable().comment('First characters of the key, to tell keys apart in listings.');
    t.string('owner', 200).notNullable().comment('Who the key identifies (the user of default auth).');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true }).nullable();
  });

  await knex.schema.createTable('deployments', (t) => {
    t.comment('A deployed agent server; its revisions are built and rolled out by the deployment workflow.');
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 63).notNullable().comment('Immutable; also the tracing project name and the URL path.');
    t.string('source', 32).notNullable().comment('codehost | external_docker | internal_docker; immutable.');
    t.jsonb('source_config').notNullable().comment('Merged on PATCH, resource_spec replaced.');
    t.string('status', 32).notNullable().comment('AWAITING_DATABASE | READY | UNUSED | AWAITING_DELETE | UNKNOWN');
    t.uuid('latest_revision_id').nullable();
    t.uuid('active_revision_id').nullable().comment('The revision serving; set only once it is healthy.');
    t.string('url', 500).nullable().comment('Stable gateway URL, null until first DEPLOYED.');
    t.string('image_version', 100).nullable();
    t.uuid('tracing_project_id').nullable();
    t.string('database_name', 63).nullable().comment('Per-deployment PostgreSQL database, once provisioned.');
    t.timestamp('last_run_at', { useTz: true }).nullable().comment('Last run served; drives UNUSED.');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable().comment('Set when deletion completed; row kept for audit.');
    t.index(['tenant_id', 'created_at']);
  });
  // A name is unique among the live deployments of a tenant.
  await knex.raw('CREATE UNIQUE INDEX deployments_tenant_name_live ON deployments (tenant_id, name) WHERE deleted_at IS NULL');

  await knex.schema.createTable('revisions', (t) => {
    t.comment('One build and rollout of a deployment configuration.');
    t.uuid('id').primary();
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.integer('number').notNullable().comment('1, 2, 3… within the deployment; for people.');
    t.string('status', 32)
      .notNullable()
      .comment('Revision status as the pipeline last wrote it (PipelineState); the API reads it from here.');
    t.text('status_message').nullable().comment('Why it failed, in a sentence a user can act on.');
    t.string('failed_step', 32).nullable().comment('clone | build | database | rollout: where retry resumes.');
    t.string('source', 32).notNullable();
    t.jsonb('source_config').notNullable().comment('Snapshot of the deployment source_config for this revision.');
    t.jsonb('source_revision_config').notNullable().comment('repo_ref, graphx_config_path, image_uri.');
    t.text('secrets_encrypted').notNullable().comment('AES-256-GCM of the JSON secrets array of this revision.');
    t.string('repo_commit_sha', 64).nullable();
    t.uuid('redeployed_from_revision_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['deployment_id', 'number']);
    t.index(['deployment_id', 'created_at']);
  });

  await knex.schema.createTable('revision_logs', (t) => {
    t.comment('Build and rollout log lines of a revision.');
    t.bigIncrements('id');
    t.uuid('revision_id').notNullable().references('revisions.id').onDelete('CASCADE');
    t.timestamp('timestamp', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.string('level', 16).notNullable();
    t.text('message').notNullable();
    t.index(['revision_id', 'id']);
  });

  await knex.schema.createTable('app_logs', (t) => {
    t.comment('Output of the deployed app (stdout/stderr of its instances).');
    t.bigIncrements('id');
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.uuid('revision_id').nullable();
    t.timestamp('timestamp', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.string('level', 16).notNullable();
    t.text('message').notNullable();
    t.index(['deployment_id', 'id']);
  });

  await knex.schema.createTable('tracing_projects', (t) => {
    t.comment('Tracing projects; one is created with each deployment, same name.');
    t.uuid('id').primary();
    t.uuid('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.uuid('deployment_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'name']);
  });

  await knex.schema.createTable('tracing_runs', (t) => {
    t.comment('One record per run of a deployed app.');
    t.uuid('id').primary().comment('The run id of the app.');
    t.uuid('project_id').notNullable().references('tracing_projects.id').onDelete('CASCADE');
    t.string('thread_id', 64).nullable();
    t.string('assistant_id', 200).nullable();
    t.string('status', 32).notNullable();
    t.timestamp('start_time', { useTz: true }).notNullable();
    t.timestamp('end_time', { useTz: true }).nullable();
    t.integer('latency_ms').nullable();
    t.text('error').nullable();
    t.text('inputs').nullable().comment('JSON, truncated to 64 KiB.');
    t.text('outputs').nullable().comment('JSON, truncated to 64 KiB.');
    t.index(['project_id', 'start_time']);
  });

  await knex.schema.createTable('service_tokens', (t) => {
    t.comment('Tokens a deployed app uses to reach the control plane, scoped to its own deployment.');
    t.uuid('id').primary();
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.string('token_hash', 64).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('pipeline_outbox', (t) => {
    t.comment(
      'Transactional outbox: a row is written in the same transaction as the change it announces, and relayed to ' +
        'the deployment workflow (signal-with-start) until delivered, so an API crash after commit loses nothing.',
    );
    t.bigIncrements('id');
    t.uuid('deployment_id').notNullable();
    t.string('kind', 32).notNullable().comment('enqueue_revision | delete_deployment');
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('delivered_at', { useTz: true }).nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error').nullable();
  });
  await knex.raw('CREATE INDEX pipeline_outbox_pending ON pipeline_outbox (id) WHERE delivered_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'pipeline_outbox',
    'service_tokens',
    'tracing_runs',
    'tracing_projects',
    'app_logs',
    'revision_logs',
    'revisions',
    'deployments',
    'api_keys',
    'tenants',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
