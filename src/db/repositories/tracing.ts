/** Tracing projects and the run records deployed apps send (CONTRACT §2.4). */
import crypto from 'node:crypto';
import { ConflictError } from '@graphx/kit/errors';
import type { DbOrTx } from '../knex';

export interface TracingProject {
  id: string;
  name: string;
  deployment_id: string | null;
  created_at: string;
}

export interface TracingRun {
  id: string;
  project_id: string;
  thread_id: string | null;
  assistant_id: string | null;
  status: string;
  start_time: string;
  end_time: string | null;
  latency_ms: number | null;
  error: string | null;
  inputs: unknown;
  outputs: unknown;
}

/** A run record as stored: inputs and outputs are JSON text already truncated by the caller. */
export interface TracingRunRow {
  id: string;
  threadId: string | null;
  assistantId: string | null;
  status: string;
  startTime: string;
  endTime: string | null;
  latencyMs: number | null;
  error: string | null;
  inputsJson: string | null;
  outputsJson: string | null;
}

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

function toProject(row: Record<string, any>): TracingProject {
  return { id: row.id, name: row.name, deployment_id: row.deployment_id ?? null, created_at: iso(row.created_at)! };
}

function parseStored(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text; // truncated JSON is returned as the text it is
  }
}

function toRun(row: Record<string, any>): TracingRun {
  return {
    id: row.id,
    project_id: row.project_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    status: row.status,
    start_time: iso(row.start_time)!,
    end_time: iso(row.end_time),
    // bigint comes back from pg as text; every latency up to the year 9999 is exact in a double.
    latency_ms: row.latency_ms === null ? null : Number(row.latency_ms),
    error: row.error,
    inputs: parseStored(row.inputs),
    outputs: parseStored(row.outputs),
  };
}

export class TracingRepository {
  constructor(private readonly db: DbOrTx) {}

  /** The deployment's own tracing project, created with it (its name is the deployment's; 409 when taken). */
  async createForDeployment(tenantId: string, name: string, deploymentId: string): Promise<string> {
    const taken = await this.db('tracing_projects').where({ tenant_id: tenantId, name }).first('id');
    if (taken) throw new ConflictError(`There already exists a tracing project named: ${name}`);
    const id = crypto.randomUUID();
    await this.db('tracing_projects').insert({ id, tenant_id: tenantId, name, deployment_id: deploymentId });
    return id;
  }

  /** Deletes a deleted deployment's tracing project (found by deployment, or by id when it was detached). */
  async deleteForDeployment(deploymentId: string, projectId: string | null): Promise<void> {
    await this.db('tracing_projects')
      .where((where) => {
        where.where({ deployment_id: deploymentId });
        if (projectId) where.orWhere({ id: projectId });
      })
      .delete();
  }

  async listProjects(tenantId: string, limit: number, offset: number): Promise<TracingProject[]> {
    const rows = await this.db('tracing_projects')
      .where({ tenant_id: tenantId })
      .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
      .limit(limit)
      .offset(offset);
    return rows.map(toProject);
  }

  async findProject(tenantId: string, projectId: string): Promise<TracingProject | null> {
    const row = await this.db('tracing_projects').where({ tenant_id: tenantId, id: projectId }).first();
    return row ? toProject(row) : null;
  }

  async listRuns(projectId: string, limit: number, offset: number): Promise<TracingRun[]> {
    const rows = await this.db('tracing_runs')
      .where({ project_id: projectId })
      .orderBy([{ column: 'start_time', order: 'desc' }, 'id'])
      .limit(limit)
      .offset(offset);
    return rows.map(toRun);
  }

  /**
   * The deployment's tracing project: the one the deployment names, else one linked to it, else a new one with the
   * deployment's name (for deployments created before projects were linked).
   */
  async projectIdForDeployment(deploymentId: string): Promise<string> {
    const deployment = await this.db('deployments').where({ id: deploymentId }).first('tenant_id', 'name', 'tracing_project_id');
    if (!deployment) throw new Error(`deployment ${deploymentId} vanished`);
    if (deployment.tracing_project_id) return deployment.tracing_project_id;
    const linked = await this.db('tracing_projects').where({ deployment_id: deploymentId }).first('id');
    if (linked) return linked.id;
    await this.db('tracing_projects')
      .insert({ id: crypto.randomUUID(), tenant_id: deployment.tenant_id, name: deployment.name, deployment_id: deploymentId })
      .onConflict(['tenant_id', 'name'])
      .ignore();
    const created = await this.db('tracing_projects')
      .where({ tenant_id: deployment.tenant_id, name: deployment.name })
      .first('id');
    return created.id;
  }

  /**
   * Inserts or updates run records (idempotent on run id). An update applies only to a run of this same project: a
   * run id that belongs to another project (another deployment, maybe another tenant) is left exactly as it is.
   */
  async upsertRuns(projectId: string, runs: TracingRunRow[]): Promise<void> {
    if (runs.length === 0) return;
    await this.db('tracing_runs')
      .insert(
        runs.map((run) => ({
          id: run.id,
          project_id: projectId,
          thread_id: run.threadId,
          assistant_id: run.assistantId,
          status: run.status,
          start_time: run.startTime,
          end_time: run.endTime,
          latency_ms: run.latencyMs,
          error: run.error,
          inputs: run.inputsJson,
          outputs: run.outputsJson,
        })),
      )
      .onConflict('id')
      .merge(['status', 'end_time', 'latency_ms', 'error', 'outputs'])
      .where('tracing_runs.project_id', projectId);
  }

  /** Marks the deployment as used (drives the UNUSED status). */
  async touchDeployment(deploymentId: string, lastRunAt: string): Promise<void> {
    await this.db('deployments')
      .where({ id: deploymentId })
      .andWhere((query) => query.whereNull('last_run_at').orWhere('last_run_at', '<', lastRunAt))
      .update({ last_run_at: lastRunAt });
  }
}
