/**
 * `local_instances` names its columns for what they hold (issue 19): the process runner's output files
 * (`stdout_path`, `stderr_path`, byte offsets copied so far), the container runner's container (`container_name`, and
 * its log cursor: the Unix second of the last copied line and how many lines of that second were copied). Before,
 * a container row kept its container name in `stdout_file` and its cursor in the byte-offset columns.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('local_instances', (t) => {
    t.renameColumn('stdout_file', 'stdout_path');
    t.renameColumn('stderr_file', 'stderr_path');
  });
  await knex.schema.alterTable('local_instances', (t) => {
    t.string('stdout_path', 1000).nullable().comment('Process runner: the file the instance writes stdout to.').alter();
    t.string('stderr_path', 1000).nullable().comment('Process runner: the file the instance writes stderr to.').alter();
    t.string('container_name', 200).nullable().comment('Container runner: the instance container.');
    t.bigInteger('log_cursor_second').notNullable().defaultTo(0).comment('Container runner: second of the last copied log line.');
    t.integer('log_cursor_lines').notNullable().defaultTo(0).comment('Container runner: lines of that second already copied.');
  });
  // Container rows had no path: their stdout_file held the container name and stderr_file ''.
  await knex.raw(`
    UPDATE local_instances
       SET container_name = stdout_path, stdout_path = NULL, stderr_path = NULL,
           log_cursor_second = stdout_offset, log_cursor_lines = stderr_offset, stdout_offset = 0, stderr_offset = 0
     WHERE stderr_path = ''`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE local_instances
       SET stdout_path = container_name, stderr_path = '', stdout_offset = log_cursor_second, stderr_offset = log_cursor_lines
     WHERE container_name IS NOT NULL`);
  await knex.schema.alterTable('local_instances', (t) => {
    t.dropColumn('container_name');
    t.dropColumn('log_cursor_second');
    t.dropColumn('log_cursor_lines');
  });
  await knex.schema.alterTable('local_instances', (t) => {
    t.string('stdout_path', 1000).notNullable().alter();
    t.string('stderr_path', 1000).notNullable().alter();
  });
  await knex.schema.alterTable('local_instances', (t) => {
    t.renameColumn('stdout_path', 'stdout_file');
    t.renameColumn('stderr_path', 'stderr_file');
  });
}
