/**
 * Activities are built by a factory from injected dependencies; only the worker's entry point builds the real ones.
 * One module per step; shared helpers live in `support/` and in the local target.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { loadRevisionSpec, RevisionNotFoundError, type RevisionSpec } from '../src/pipeline/revisionSpec';
import { buildApplicationActivity } from './build';
import { cloneRepositoryActivity } from './clone';
import { provisionDatabaseActivity } from './database';
import type { ActivityDeps } from './deps';
import { rolloutRevisionActivity } from './rollout';
import { recordDeploymentStatusActivity, recordRevisionStatusActivity } from './status';
import { teardownDeploymentActivity } from './teardown';
import type { PipelineActivities } from './types';

export type { ActivityDeps } from './deps';

/** Builds every pipeline activity from its dependencies. */
export function createActivities(deps: ActivityDeps): PipelineActivities {
  const load = async (revisionId: string): Promise<RevisionSpec> => {
    try {
      return await loadRevisionSpec(deps.db, deps.secretBox, revisionId);
    } catch (error) {
      // Retrying cannot make a missing revision appear.
      if (error instanceof RevisionNotFoundError) throw ApplicationFailure.nonRetryable(error.message, 'ConfigInvalid');
      throw error;
    }
  };
  return {
    recordRevisionStatus: recordRevisionStatusActivity(deps),
    recordDeploymentStatus: recordDeploymentStatusActivity(deps),
    cloneRepository: cloneRepositoryActivity(deps, load),
    buildApplication: buildApplicationActivity(deps, load),
    provisionDatabase: provisionDatabaseActivity(deps),
    rolloutRevision: rolloutRevisionActivity(deps, load),
    teardownDeployment: teardownDeploymentActivity(deps),
  };
}
