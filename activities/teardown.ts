/**
 * Teardown of a deleted deployment: stop its instances, drop its database and role, delete its service tokens, the
 * builder's artefacts (the container runner's images; pulled `image_uri`s may be shared and stay) and build
 * directories, optionally its tracing project, then mark it deleted. Every step tolerates having been done
 * already, so a re-run after a crash finishes the job. It runs only for a deployment the database marks for deletion.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import fs from 'node:fs';
import path from 'node:path';
import { InstanceStore } from '../src/db/repositories/instances';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { TracingRepository } from '../src/db/repositories/tracing';
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
    await new InstanceStore(db).deleteServiceTokens(deploymentId);
    if (input.deleteTracingProject || deployment.deleteTracingProject) {
      await new TracingRepository(db).deleteForDeployment(deploymentId, deployment.tracingProjectId ?? null);
    }
    const revisionIds = await state.revisionIds(deploymentId);
    heartbeat('removing build artefacts');
    await builder.removeDeploymentArtefacts(deploymentId, revisionIds);
    heartbeat('removing files');
    for (const revisionId of revisionIds) {
      fs.rmSync(buildPaths(config.dataDir, revisionId).root, { recursive: true, force: true });
    }
    for (const file of await new InstanceStore(db).outputFiles(deploymentId)) {
      if (path.resolve(file).startsWith(config.dataDir + path.sep)) fs.rmSync(file, { force: true });
    }
    await state.markDeploymentDeleted(deploymentId);
  };
}
