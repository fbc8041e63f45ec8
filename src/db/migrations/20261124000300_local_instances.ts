/** Processes of the local target (one row per app instance) and the tracing-project flag of a deletion. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('local_instances', (t) => {
    t.comment(
      'App instances run by the local target. The gateway routes from this table, so a worker process and the API ' +
        'process agree on where a deployment is served; a restarted worker adopts live rows by pid.',
    );
    t.uuid('id').primary();
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.uuid('revision_id').notNullable().references('revisions.id').onDelete('CASCADE');
    t.integer('port').notNullable().comment('Loopback port the instance listens on.');
    t.integer('pid').nullable().comment('Leader of the instance process group; null until spawned.');
    t.string('status', 16)
      .notNullable()
      .comment('starting (not routed) | serving (routed by the gateway) | draining (unrouted, finishing) | stopped');
    t.uuid('service_token_id').nullable().comment('The service token given to this instance; deleted when it stops.');
    t.string('stdout_file', 1000).notNullable().comment('Where the instance writes stdout; tailed into app_logs.');
    t.string('stderr_file', 1000).notNullable().comment('Where the instance writes stderr; tailed into app_logs.');
    t.bigInteger('stdout_offset').notNullable().defaultTo(0).comment('Bytes of stdout already copied to app_logs.');
    t.bigInteger('stderr_offset').notNullable().defaultTo(0).comment('Bytes of stderr already copied to app_logs.');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('stopped_at', { useTz: true }).nullable();
  });
  await knex.raw("CREATE INDEX local_instances_live ON local_instances (deployment_id, status) WHERE status <> 'stopped'");
  await knex.schema.alterTable('deployments', (t) => {
    t.boolean('delete_tracing_project')
      .notNullable()
      .defaultTo(false)
      .comment('Set by DELETE with delete_tracing_project=true: teardown deletes the tracing project too.');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deployments', (t) => {
    t.dropColumn('delete_tracing_project');
  });
  await knex.schema.dropTableIfExists('local_instances');
}
