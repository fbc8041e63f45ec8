/**
 * The image a revision runs (issue 10): the built revision image (`codehost` in container mode) or the pulled
 * `image_uri` (`external_docker`/`internal_docker`), with its digest. Null until the build step recorded one, and
 * always null for a revision built as a process.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('revisions', (t) => {
    t.string('image_ref', 2000).nullable().comment('Image the revision runs: built revision image or pulled image_uri.');
    t.string('image_digest', 100).nullable().comment('sha256 digest of image_ref: repo digest when pulled, image id when built.');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('revisions', (t) => {
    t.dropColumn('image_digest');
    t.dropColumn('image_ref');
  });
}
