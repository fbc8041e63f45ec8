/** What the activities are built from; only the worker's entry point builds the real ones. */
import type { GraphxConfig } from '../src/config';
import type { Db } from '../src/db/knex';
import type { SecretBox } from '../src/security/secretBox';
import type { DeploymentTarget } from '../src/targets/target';

export interface ActivityDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  /** The target port; the worker's composition root passes the concrete one (LocalTarget). */
  target: DeploymentTarget;
}
