/** The local target's record of its app instances (`local_instances`). */
import type { Db } from '../../db/knex';

/** Rows of `local_instances`, as the target uses them. */
export interface InstanceRow {
  id: string;
  deployment_id: string;
  revision_id: string;
  port: number;
  pid: number | null;
  status: 'starting' | 'serving' | 'draining' | 'stopped';
  service_token_id: string | null;
  stdout_file: string;
  stderr_file: string;
}

/** Instances of a deployment that are not stopped. */
export function liveInstances(db: Db, deploymentId: string): Promise<InstanceRow[]> {
  return db('local_instances').where({ deployment_id: deploymentId }).whereNot({ status: 'stopped' }).orderBy('created_at');
}
