/**
 * The one owner of what runs on this machine's targets: `local_instances` (an app instance behind the gateway: a
 * process or a container), `service_tokens` (what an instance, or a Kubernetes revision, shows the control plane's
 * internal API) and `app_logs` (the apps' output, copied exactly once across processes). Targets call this store;
 * nothing else writes these tables (test/unit/tableOwnership.test.ts).
 */
import type { DbOrTx } from '../knex';

export type InstanceStatus = 'starting' | 'serving' | 'draining' | 'stopped';

/** A row of `local_instances`, as the targets use it. */
export interface InstanceRow {
  id: string;
  deployment_id: string;
  revision_id: string;
  port: number;
  pid: number | null;
  status: InstanceStatus;
  service_token_id: string | null;
  /** Process runner: where the instance writes its output. */
  stdout_path: string | null;
  stderr_path: string | null;
  /** Container runner: the instance's container. */
  container_name: string | null;
}

/** How far an instance's output was copied: byte offsets of its files, or its container log's second and lines. */
export interface OutputCursor {
  stdout_offset: number;
  stderr_offset: number;
  log_cursor_second: number;
  log_cursor_lines: number;
}

export interface AppLogLine {
  level: 'info' | 'error';
  message: string;
}

const LIVE: InstanceStatus[] = ['starting', 'serving', 'draining'];

export class InstanceStore {
  constructor(private readonly db: DbOrTx) {}

  /** A new instance (status `starting`) and the hash of its service token, together. */
  async create(row: InstanceRow, serviceTokenHash: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      if (row.service_token_id) {
        await trx('service_tokens').insert({
          id: row.service_token_id,
          deployment_id: row.deployment_id,
          token_hash: serviceTokenHash,
        });
      }
      await trx('local_instances').insert(row);
    });
  }

  async setPid(id: string, pid: number | null): Promise<void> {
    await this.db('local_instances').where({ id }).update({ pid, updated_at: this.db.fn.now() });
  }

  async statusOf(id: string): Promise<InstanceStatus | null> {
    const row = await this.db('local_instances').where({ id }).first('status');
    return (row?.status as InstanceStatus | undefined) ?? null;
  }

  /** A started replacement serves (unless something else moved it on meanwhile). */
  async markServing(id: string): Promise<void> {
    await this.db('local_instances')
      .where({ id, status: 'starting' })
      .update({ status: 'serving', updated_at: this.db.fn.now() });
  }

  /** The instance is gone: its row says so and its service token stops working, together. */
  async markStopped(row: Pick<InstanceRow, 'id' | 'service_token_id'>): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('local_instances')
        .where({ id: row.id })
        .update({ status: 'stopped', stopped_at: trx.fn.now(), updated_at: trx.fn.now() });
      if (row.service_token_id) await trx('service_tokens').where({ id: row.service_token_id }).delete();
    });
  }

  /**
   * The route switch's half in this store (pass the switch's transaction): `ids` serve; every other live instance of
   * the deployment that is not of `revisionId` drains.
   */
  async serveOnly(deploymentId: string, revisionId: string, ids: string[]): Promise<void> {
    await this.db('local_instances').whereIn('id', ids).update({ status: 'serving', updated_at: this.db.fn.now() });
    await this.db('local_instances')
      .where({ deployment_id: deploymentId })
      .whereNot({ revision_id: revisionId })
      .whereIn('status', ['serving', 'starting'])
      .update({ status: 'draining', updated_at: this.db.fn.now() });
  }

  /** Instances of a deployment that are not stopped, oldest first. */
  live(deploymentId: string): Promise<InstanceRow[]> {
    return this.db('local_instances')
      .where({ deployment_id: deploymentId })
      .whereNot({ status: 'stopped' })
      .orderBy('created_at');
  }

  /** Every instance that is not stopped (of `ids` when given). */
  liveAnywhere(ids?: string[]): Promise<InstanceRow[]> {
    const query = this.db('local_instances').whereNot({ status: 'stopped' });
    return ids ? query.whereIn('id', ids) : query;
  }

  async hasServing(deploymentId: string): Promise<boolean> {
    return Boolean(await this.db('local_instances').where({ deployment_id: deploymentId, status: 'serving' }).first('id'));
  }

  /** Deployments (not deleted) with an active revision or live instances: what a restart brings back or cleans up. */
  deploymentsToRestore(): Promise<string[]> {
    const db = this.db;
    return db('deployments')
      .whereNull('deleted_at')
      .andWhere((where) =>
        where
          .whereNotNull('active_revision_id')
          .orWhereExists(
            db('local_instances').whereRaw('local_instances.deployment_id = deployments.id').whereIn('status', LIVE),
          ),
      )
      .pluck('id');
  }

  /** The output files instances of a deployment wrote (a teardown removes those under the data dir). */
  async outputFiles(deploymentId: string): Promise<string[]> {
    const rows: Array<Pick<InstanceRow, 'stdout_path' | 'stderr_path'>> = await this.db('local_instances')
      .where({ deployment_id: deploymentId })
      .select('stdout_path', 'stderr_path');
    return rows.flatMap((row) => [row.stdout_path, row.stderr_path]).filter((file): file is string => Boolean(file));
  }

  /** Lines of a deployment's app log written by the control plane (a replaced instance's death). */
  async appendAppLogs(row: Pick<InstanceRow, 'deployment_id' | 'revision_id'>, lines: AppLogLine[]): Promise<void> {
    if (lines.length === 0) return;
    const entries = lines.map((line) => ({ deployment_id: row.deployment_id, revision_id: row.revision_id, ...line }));
    await this.db.batchInsert('app_logs', entries, 500);
  }

  /**
   * Copies an instance's new output into `app_logs` exactly once across processes: under the row's lock, `read` gets
   * the cursor and returns the lines after it and the cursor's new value (null: nothing new).
   */
  async copyOutput(
    row: Pick<InstanceRow, 'id' | 'deployment_id' | 'revision_id'>,
    read: (cursor: OutputCursor) => Promise<{ lines: AppLogLine[]; cursor: Partial<OutputCursor> } | null>,
  ): Promise<void> {
    await this.db.transaction(async (trx) => {
      const current = await trx('local_instances')
        .where({ id: row.id })
        .forUpdate()
        .first('stdout_offset', 'stderr_offset', 'log_cursor_second', 'log_cursor_lines');
      if (!current) return;
      const fresh = await read({
        stdout_offset: Number(current.stdout_offset),
        stderr_offset: Number(current.stderr_offset),
        log_cursor_second: Number(current.log_cursor_second),
        log_cursor_lines: Number(current.log_cursor_lines),
      });
      if (!fresh || Object.keys(fresh.cursor).length === 0) return;
      await new InstanceStore(trx).appendAppLogs(row, fresh.lines);
      await trx('local_instances').where({ id: row.id }).update(fresh.cursor);
    });
  }

  /** A service token that may exist already (a Kubernetes revision's, derived from its id). */
  async ensureServiceToken(id: string, deploymentId: string, tokenHash: string): Promise<void> {
    await this.db('service_tokens').insert({ id, deployment_id: deploymentId, token_hash: tokenHash }).onConflict('id').ignore();
  }

  /** Which of `ids` are service tokens on record. */
  async existingServiceTokenIds(ids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < ids.length; start += 1000) {
      const rows: Array<{ id: string }> = await this.db('service_tokens')
        .whereIn('id', ids.slice(start, start + 1000))
        .select('id');
      for (const row of rows) found.add(row.id);
    }
    return found;
  }

  /** Removes a deployment's service tokens (all, or all but `keepId`). */
  async deleteServiceTokens(deploymentId: string, keepId?: string): Promise<void> {
    const query = this.db('service_tokens').where({ deployment_id: deploymentId });
    await (keepId ? query.whereNot({ id: keepId }) : query).delete();
  }
}
