/** Deployments: rows ↔ objects, tenant-scoped reads, guarded state changes. */
import type { DbOrTx } from '../knex';
import { ConflictError } from '@graphx/kit/errors';
import { PreparedStatement } from '../prepared';
import type { DeploymentStatus } from '@graphx/contract/statuses';
import type { RevisionRecord } from './revisions';
import type { SourceConfig } from './sourceConfig';

/** The columns `toDeployment` reads, in the order `deploymentFromValues` indexes them. */
export const DEPLOYMENT_COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'source',
  'source_config',
  'status',
  'latest_revision_id',
  'active_revision_id',
  'url',
  'image_version',
  'tracing_project_id',
  'database_name',
  'last_run_at',
  'created_at',
  'updated_at',
  'deleted_at',
];

/**
 * What a deployment's view shows of its latest revision: only these columns are read with it (each column more is a
 * field pg parses on every GET deployment, two of them timestamps and one jsonb).
 */
export type LatestRevisionSummary = Pick<
  RevisionRecord,
  'id' | 'sourceRevisionConfig' | 'secretsEncrypted' | 'repoCommitSha' | 'imageRef' | 'imageDigest'
>;
const LATEST_REVISION_COLUMNS = [
  'id',
  'source_revision_config',
  'secrets_encrypted',
  'repo_commit_sha',
  'image_ref',
  'image_digest',
];

// Columns named, not `*`: a prepared statement's result shape is fixed when it is first parsed.
// The version of what GET deployment shows: the row versions (xmin: every UPDATE makes a new one) of the deployment and
// of its latest revision.
const VIEW_VERSION = `d.xmin::text || ':' || coalesce(r.xmin::text, '')`;
const deploymentWithLatestRevision = new PreparedStatement(
  'graphx_deployment_with_latest_revision_v3',
  `SELECT ${DEPLOYMENT_COLUMNS.map((column) => `d.${column}`).join(', ')},
          ${LATEST_REVISION_COLUMNS.map((column) => `r.${column}`).join(', ')}, ${VIEW_VERSION}
   FROM deployments d LEFT JOIN revisions r ON r.id = d.latest_revision_id
   WHERE d.id = ? AND d.tenant_id = ? AND d.deleted_at IS NULL`,
);
const deploymentViewVersion = new PreparedStatement(
  'graphx_deployment_view_version_v1',
  `SELECT ${VIEW_VERSION} FROM deployments d LEFT JOIN revisions r ON r.id = d.latest_revision_id
   WHERE d.id = ? AND d.tenant_id = ? AND d.deleted_at IS NULL`,
);

export interface DeploymentRecord {
  id: string;
  tenantId: string;
  name: string;
  source: string;
  sourceConfig: SourceConfig;
  status: DeploymentStatus;
  latestRevisionId: string | null;
  activeRevisionId: string | null;
  url: string | null;
  imageVersion: string | null;
  tracingProjectId: string | null;
  databaseName: string | null;
  lastRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export function toDeployment(row: Record<string, any>): DeploymentRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    source: row.source,
    sourceConfig: row.source_config,
    status: row.status,
    latestRevisionId: row.latest_revision_id,
    activeRevisionId: row.active_revision_id,
    url: row.url,
    imageVersion: row.image_version,
    tracingProjectId: row.tracing_project_id,
    databaseName: row.database_name,
    lastRunAt: row.last_run_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

/** `toDeployment` of a row read as values in DEPLOYMENT_COLUMNS order (see revisionFromValues). */
export function deploymentFromValues(values: unknown[]): DeploymentRecord {
  const value = (index: number) => values[index] as any;
  return {
    id: value(0),
    tenantId: value(1),
    name: value(2),
    source: value(3),
    sourceConfig: value(4),
    status: value(5),
    latestRevisionId: value(6),
    activeRevisionId: value(7),
    url: value(8),
    imageVersion: value(9),
    tracingProjectId: value(10),
    databaseName: value(11),
    lastRunAt: value(12),
    createdAt: value(13),
    updatedAt: value(14),
    deletedAt: value(15),
  };
}

export interface NewDeployment {
  id: string;
  tenantId: string;
  name: string;
  source: string;
  sourceConfig: SourceConfig;
  imageVersion: string | null;
  tracingProjectId: string;
  routeKey: string;
}

export class DeploymentRepository {
  constructor(private readonly db: DbOrTx) {}

  async insert(deployment: NewDeployment): Promise<void> {
    await this.db('deployments').insert({
      id: deployment.id,
      tenant_id: deployment.tenantId,
      name: deployment.name,
      source: deployment.source,
      source_config: JSON.stringify(deployment.sourceConfig),
      status: 'AWAITING_DATABASE',
      image_version: deployment.imageVersion,
      tracing_project_id: deployment.tracingProjectId,
      route_key: deployment.routeKey,
    });
  }

  /** A live (not deleted) deployment of the tenant, or null: another tenant's id reads as missing. */
  async find(tenantId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<DeploymentRecord | null> {
    const query = this.db('deployments').where({ id, tenant_id: tenantId }).whereNull('deleted_at').first();
    if (options.forUpdate) query.forUpdate();
    const row = await query;
    return row ? toDeployment(row) : null;
  }

  /**
   * The live `codehost` deployments of these tenants that build on push (`source_config.build_on_push`), locked for
   * the revisions a push creates.
   */
  async buildingOnPush(tenantIds: string[]): Promise<DeploymentRecord[]> {
    if (tenantIds.length === 0) return [];
    const rows = await this.db('deployments')
      .whereIn('tenant_id', tenantIds)
      .where({ source: 'codehost' })
      .whereNull('deleted_at')
      .whereNot({ status: 'AWAITING_DELETE' })
      .whereRaw("(source_config->>'build_on_push')::boolean IS TRUE")
      .orderBy('created_at')
      .forUpdate();
    return rows.map(toDeployment);
  }

  /** The app instances up for the tenant's live deployments (serving or draining), for metrics discovery. */
  async runningInstances(
    tenantId: string,
  ): Promise<
    Array<{ id: string; port: number; status: string; deploymentId: string; deploymentName: string; revisionId: string }>
  > {
    const rows = await this.db('local_instances as i')
      .join('deployments as d', 'd.id', 'i.deployment_id')
      .where('d.tenant_id', tenantId)
      .whereNull('d.deleted_at')
      .whereIn('i.status', ['serving', 'draining'])
      .orderBy([{ column: 'd.name' }, { column: 'i.created_at' }])
      .select('i.id', 'i.port', 'i.status', 'i.revision_id', 'd.id as deployment_id', 'd.name');
    return rows.map((row) => ({
      id: row.id,
      port: row.port,
      status: row.status,
      deploymentId: row.deployment_id,
      deploymentName: row.name,
      revisionId: row.revision_id,
    }));
  }

  /**
   * The version of a live deployment's view (its row's and its latest revision's row versions), or null: what GET
   * deployment reads when its serialized view is cached.
   */
  async viewVersion(tenantId: string, id: string): Promise<string | null> {
    const [row] = await deploymentViewVersion.values(this.db, [id, tenantId]);
    return row ? (row[0] as string) : null;
  }

  /** A live deployment with its latest revision and their view version, in one query (GET deployment, CI polls it). */
  async findWithLatestRevision(
    tenantId: string,
    id: string,
  ): Promise<{ deployment: DeploymentRecord; latest: LatestRevisionSummary | null; version: string } | null> {
    const [row] = await deploymentWithLatestRevision.values(this.db, [id, tenantId]);
    if (!row) return null;
    // The revision's columns (LATEST_REVISION_COLUMNS) follow the deployment's; no latest revision reads as nulls.
    const at = DEPLOYMENT_COLUMNS.length;
    const latest: LatestRevisionSummary | null = row[at]
      ? {
          id: row[at] as string,
          sourceRevisionConfig: row[at + 1] as RevisionRecord['sourceRevisionConfig'],
          secretsEncrypted: row[at + 2] as string,
          repoCommitSha: row[at + 3] as string | null,
          imageRef: row[at + 4] as string | null,
          imageDigest: row[at + 5] as string | null,
        }
      : null;
    return { deployment: deploymentFromValues(row), latest, version: row[at + LATEST_REVISION_COLUMNS.length] as string };
  }

  /** The gateway path for a new deployment: its name, unless another tenant's live deployment already holds it. */
  async freeRouteKey(name: string, deploymentId: string): Promise<string> {
    const taken = await this.db('deployments').where({ route_key: name }).whereNull('deleted_at').first('id');
    return taken ? `${name}-${deploymentId.slice(0, 8)}` : name;
  }

  async existsByName(tenantId: string, name: string): Promise<boolean> {
    return Boolean(await this.db('deployments').where({ tenant_id: tenantId, name }).whereNull('deleted_at').first('id'));
  }

  /**
   * A page of the tenant's deployments. UNUSED is not stored (a READY deployment with an active revision and no run
   * for `unusedAfterDays` reads as UNUSED; views.ts), so the `status` filter computes it here the same way.
   */
  async list(
    tenantId: string,
    filters: { nameContains?: string; status?: string; limit: number; offset: number; unusedAfterDays: number },
  ): Promise<DeploymentRecord[]> {
    const query = this.db('deployments').where({ tenant_id: tenantId }).whereNull('deleted_at');
    if (filters.nameContains) query.where('name', 'like', `%${filters.nameContains.replace(/[\\%_]/g, '\\$&')}%`);
    const idleSince = 'coalesce(last_run_at, updated_at) < now() - make_interval(days => ?)';
    if (filters.status === 'UNUSED') {
      query.where({ status: 'READY' }).whereNotNull('active_revision_id').whereRaw(idleSince, [filters.unusedAfterDays]);
    } else if (filters.status === 'READY') {
      query
        .where({ status: 'READY' })
        .andWhere((ready) => ready.whereNull('active_revision_id').orWhereRaw(`not (${idleSince})`, [filters.unusedAfterDays]));
    } else if (filters.status) {
      query.where({ status: filters.status });
    }
    const rows = await query
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
      .limit(filters.limit)
      .offset(filters.offset);
    return rows.map(toDeployment);
  }

  async update(
    id: string,
    changes: Partial<{ sourceConfig: SourceConfig; latestRevisionId: string; imageVersion: string | null }>,
  ): Promise<void> {
    const row: Record<string, unknown> = { updated_at: this.db.fn.now() };
    if (changes.sourceConfig) row.source_config = JSON.stringify(changes.sourceConfig);
    if (changes.latestRevisionId) row.latest_revision_id = changes.latestRevisionId;
    if (changes.imageVersion !== undefined) row.image_version = changes.imageVersion;
    await this.db('deployments').where({ id }).update(row);
  }

  /** Moves a live deployment to AWAITING_DELETE; a second delete of the same deployment is a conflict. */
  async markAwaitingDelete(id: string): Promise<void> {
    const updated = await this.db('deployments')
      .where({ id })
      .whereNull('deleted_at')
      .whereNot({ status: 'AWAITING_DELETE' })
      .update({ status: 'AWAITING_DELETE', updated_at: this.db.fn.now() });
    if (updated === 0) throw new ConflictError(`Deployment ID ${id} is already being deleted.`);
  }
}
