/** What the activities are built from; only the worker's entry point builds the real ones. */
import type { GraphxConfig } from '../src/config';
import type { Db } from '../src/db/knex';
import type { SecretBox } from '../src/security/secretBox';
import type { LocalTarget } from '../src/targets/local';

export interface ActivityDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  target: LocalTarget;
}
