/**
 * Teardown of a deleted deployment: stop its instances, drop its database and role, delete its service tokens, the
 * builder's artefacts (the container runner's images; pulled `image_uri`s may be shared and stay) and build
 * directories, optionally its tracing project, then mark it deleted. Every step tolerates having been done
 * already, so a re-run after a crash finishes the job. It runs only for a deployment the database marks for deletion.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import fs from 'node:fs';
import path from 'node:path';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { dropDeploymentDatabase } from '../src/pipeline/deploymentDatabase';
import { buildPaths } from '../src/pipeline/revisionSpec';
import type { ActivityDeps } from './deps';

const heartbeat = (phase: string) => {
  try {
    Context.current().heartbeat({ phase, lastLines: [] });
  } catch {
    // Called outside an activity.
  }
};

/** The `teardownDeployment` activity. */
export function teardownDeploymentActivity({ db, config, target, builder }: ActivityDeps) {
  return async (input: { deploymentId: string; deleteTracingProject?: boolean }): Promise<void> => {
    const { deploymentId } = input;
    const state = new PipelineState(db);
    const deployment = await state.deployment(deploymentId);
    if (!deployment) return;
    // The delete signal reaches the workflow from whoever can talk to Temporal; the database's own mark, set only by
    // the API's delete, decides.
    if (!deployment.deletedAt && deployment.status !== 'AWAITING_DELETE') {
      throw ApplicationFailure.nonRetryable(
        `Deployment ${deploymentId} is not marked for deletion (status ${deployment.status}); teardown refused.`,
        'NotMarkedForDeletion',
      );
    }
    heartbeat('stopping instances');
    await target.stopDeployment(deploymentId, () => heartbeat('stopping instances'));
    heartbeat('dropping database');
    await dropDeploymentDatabase(db, deploymentId);
    await db('service_tokens').where({ deployment_id: deploymentId }).delete();
    if (input.deleteTracingProject || deployment.deleteTracingProject) {
      await db('tracing_projects')
        .where((where) => {
          where.where({ deployment_id: deploymentId });
          if (deployment.tracingProjectId) where.orWhere({ id: deployment.tracingProjectId });
        })
        .delete();
    }
    const revisionIds = await state.revisionIds(deploymentId);
    heartbeat('removing build artefacts');
    await builder.removeDeploymentArtefacts(deploymentId, revisionIds);
    heartbeat('removing files');
    for (const revisionId of revisionIds) {
      fs.rmSync(buildPaths(config.dataDir, revisionId).root, { recursive: true, force: true });
    }
    const instances: Array<{ stdout_file: string; stderr_file: string }> = await db('local_instances')
      .where({ deployment_id: deploymentId })
      .select('stdout_file', 'stderr_file');
    for (const instance of instances) {
      for (const file of [instance.stdout_file, instance.stderr_file]) {
        if (path.resolve(file).startsWith(config.dataDir + path.sep)) fs.rmSync(file, { force: true });
      }
    }
    await state.markDeploymentDeleted(deploymentId);
  };
}
