/**
 * Activities are built by a factory from injected dependencies; only the worker's entry point builds the real ones.
 */
import type { GraphxConfig } from '../src/config';
import type { Db } from '../src/db/knex';
import type { SecretBox } from '../src/security/secretBox';
import type { LocalTarget } from '../src/targets/local';
import type { PipelineActivities } from './types';

export interface ActivityDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  target: LocalTarget;
}

export function createActivities(_deps: ActivityDeps): PipelineActivities {
  const notYet = (name: string) => async () => {
    throw new Error(`activity ${name} is not implemented yet`);
  };
  return {
    recordRevisionStatus: notYet('recordRevisionStatus'),
    recordDeploymentStatus: notYet('recordDeploymentStatus'),
    cloneRepository: notYet('cloneRepository'),
    buildApplication: notYet('buildApplication'),
    provisionDatabase: notYet('provisionDatabase'),
    rolloutRevision: notYet('rolloutRevision'),
    teardownDeployment: notYet('teardownDeployment'),
  };
}
