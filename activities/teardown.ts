/**
 * Teardown of a deleted deployment: stop its instances, drop its database and role, delete its service tokens and
 * build directories, optionally its tracing project, then mark it deleted. Every step tolerates having been done
 * already, so a re-run after a crash finishes the job.
 */
import { Context } from '@temporalio/activity';
import fs from 'node:fs';
import path from 'node:path';
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
export function teardownDeploymentActivity({ db, config, target }: ActivityDeps) {
  return async (input: { deploymentId: string; deleteTracingProject?: boolean }): Promise<void> => {
    const { deploymentId } = input;
    const deployment = await db('deployments')
      .where({ id: deploymentId })
      .first('id', 'tracing_project_id', 'delete_tracing_project', 'deleted_at');
    if (!deployment) return;
    heartbeat('stopping instances');
    await target.stopDeployment(deploymentId, () => heartbeat('stopping instances'));
    heartbeat('dropping database');
    await dropDeploymentDatabase(db, deploymentId);
    await db('service_tokens').where({ deployment_id: deploymentId }).delete();
    if (input.deleteTracingProject || deployment.delete_tracing_project) {
      await db('tracing_projects')
        .where((where) => {
          where.where({ deployment_id: deploymentId });
          if (deployment.tracing_project_id) where.orWhere({ id: deployment.tracing_project_id });
        })
        .delete();
    }
    heartbeat('removing files');
    const revisions: Array<{ id: string }> = await db('revisions').where({ deployment_id: deploymentId }).select('id');
    for (const revision of revisions) fs.rmSync(buildPaths(config.dataDir, revision.id).root, { recursive: true, force: true });
    const instances: Array<{ stdout_file: string; stderr_file: string }> = await db('local_instances')
      .where({ deployment_id: deploymentId })
      .select('stdout_file', 'stderr_file');
    for (const instance of instances) {
      for (const file of [instance.stdout_file, instance.stderr_file]) {
        if (path.resolve(file).startsWith(config.dataDir + path.sep)) fs.rmSync(file, { force: true });
      }
    }
    await db('deployments')
      .where({ id: deploymentId })
      .whereNull('deleted_at')
      .update({ deleted_at: db.fn.now(), updated_at: db.fn.now() });
  };
}
