/** What the activities are built from; only the worker's entry point builds the real ones. */
import type { GraphxConfig } from '../src/config';
import type { RevisionBuilder } from '../src/builders/builder';
import type { Db } from '../src/db/knex';
import type { SecretBox } from '../src/security/secretBox';
import type { DeploymentTarget } from '../src/targets/target';

export interface ActivityDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  /** The target port; the worker's composition root passes the concrete one (ProcessTarget). */
  target: DeploymentTarget;
  /** The builder port: the build half of the same runner (src/builders; chosen with the target). */
  builder: RevisionBuilder;
}
