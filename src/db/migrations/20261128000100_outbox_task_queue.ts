/**
 * Each outbox row names the control task queue of the installation that wrote it (GRAPHX_TASK_QUEUE_PREFIX), and the
 * relay starts the deployment workflow there, whichever process delivers the row: installations sharing a database
 * and a Temporal namespace (the stacks of one test run) never run each other's workflows. Rows written before this
 * column went to the default queue.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pipeline_outbox', (table) => {
    table.text('task_queue').notNullable().defaultTo('graphx-control');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pipeline_outbox', (table) => {
    table.dropColumn('task_queue');
  });
}
