/** What the activities are built from; only the worker's entry point builds the real ones. */
import type { GraphxConfig } from '../src/config';
import type { RevisionImages } from '../src/containers/revisionImages';
import type { Db } from '../src/db/knex';
import type { SecretBox } from '../src/security/secretBox';
import type { DeploymentTarget } from '../src/targets/target';

export interface ActivityDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  /** The target port; the worker's composition root passes the concrete one (LocalTarget). */
  target: DeploymentTarget;
  /**
   * The container runner's images: when present, `codehost` revisions are built into images in the engine and image
   * sources are pulled; when absent (process runner) builds run on the host as before.
   */
  images?: RevisionImages;
}
