/** Revisions and their log lines. */
import type { DbOrTx } from '../knex';
import { PreparedStatement } from '../prepared';
import type { PipelineStep, RevisionStatus } from '@graphx/contract/statuses';
import type { SourceConfig, SourceRevisionConfig } from './sourceConfig';

export interface RevisionRecord {
  id: string;
  deploymentId: string;
  tenantId: string;
  number: number;
  status: RevisionStatus;
  statusMessage: string | null;
  failedStep: PipelineStep | null;
  source: string;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig;
  secretsEncrypted: string;
  repoCommitSha: string | null;
  /** The image the revision runs, once its build step recorded one (container runner, image sources). */
  imageRef: string | null;
  imageDigest: string | null;
  redeployedFromRevisionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The columns `toRevision` reads, in the order `revisionFromValues` indexes them (named, not `*`: a prepared statement's
 * result shape is fixed when parsed).
 */
export const REVISION_COLUMNS = [
  'id',
  'deployment_id',
  'tenant_id',
  'number',
  'status',
  'status_message',
  'failed_step',
  'source',
  'source_config',
  'source_revision_config',
  'secrets_encrypted',
  'repo_commit_sha',
  'image_ref',
  'image_digest',
  'redeployed_from_revision_id',
  'created_at',
  'updated_at',
];

const revisionColumns = REVISION_COLUMNS.map((column) => `r.${column}`).join(', ');
const OF_LIVE_DEPLOYMENT = `FROM revisions r JOIN deployments d ON d.id = r.deployment_id
   WHERE d.tenant_id = ? AND d.deleted_at IS NULL AND r.deployment_id = ?`;
const revisionOfTenant = new PreparedStatement(
  'graphx_revision_of_tenant_v1',
  `SELECT ${revisionColumns} ${OF_LIVE_DEPLOYMENT} AND r.id = ?`,
);
// A row's version: PostgreSQL's xmin, the transaction that wrote this version of the row. Every UPDATE, by any
// writer, makes a new row version with a new xmin, so (id, xmin) names the content without trusting updated_at.
// A page's (id, row version) list as one text, `id:xmin` pairs joined by commas, newest first: one row for pg to send
// and parse whatever the page's length (20 rows of two columns cost more, in pg's parsing and ours, than the join in
// PostgreSQL), and the text itself is what the cache of whole pages compares (deployments/pageCache.ts).
const pageVersionsOfTenant = (filter: string) =>
  `SELECT string_agg(p.id::text || ':' || p.version::text, ',' ORDER BY p.number DESC)
   FROM (SELECT r.id, r.xmin AS version, r.number ${OF_LIVE_DEPLOYMENT}${filter} ORDER BY r.number DESC LIMIT ? OFFSET ?) p`;
const revisionPageOfTenant = new PreparedStatement('graphx_revision_page_of_tenant_v1', pageVersionsOfTenant(''));
const revisionPageOfTenantWithStatus = new PreparedStatement(
  'graphx_revision_page_of_tenant_with_status_v1',
  pageVersionsOfTenant(' AND r.status = ANY(?::text[])'),
);
const revisionVersionOfTenant = new PreparedStatement(
  'graphx_revision_version_of_tenant_v1',
  `SELECT r.xmin::text ${OF_LIVE_DEPLOYMENT} AND r.id = ?`,
);
const revisionsWithVersion = new PreparedStatement(
  'graphx_revisions_with_version_v1',
  `SELECT ${REVISION_COLUMNS.join(', ')}, xmin::text FROM revisions WHERE id = ANY(?::uuid[])`,
);

/** A revision's id and the version of its row (changes with every update of the row). */
export interface RevisionVersion {
  id: string;
  version: string;
}

/** The (id, version) list of a text `pageOfTenant` returned. */
export function pageVersions(page: string): RevisionVersion[] {
  if (page === '') return [];
  return page.split(',').map((pair) => {
    const colon = pair.indexOf(':');
    return { id: pair.slice(0, colon), version: pair.slice(colon + 1) };
  });
}

export function toRevision(row: Record<string, any>): RevisionRecord {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    tenantId: row.tenant_id,
    number: row.number,
    status: row.status,
    statusMessage: row.status_message,
    failedStep: row.failed_step,
    source: row.source,
    sourceConfig: row.source_config,
    sourceRevisionConfig: row.source_revision_config,
    secretsEncrypted: row.secrets_encrypted,
    repoCommitSha: row.repo_commit_sha,
    imageRef: row.image_ref ?? null,
    imageDigest: row.image_digest ?? null,
    redeployedFromRevisionId: row.redeployed_from_revision_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * `toRevision` of a row read as values (PreparedStatement.values) in REVISION_COLUMNS order, starting at `at` (a join
 * puts its own columns first). Kept beside the list it indexes; a unit test checks the two agree.
 */
export function revisionFromValues(values: unknown[], at = 0): RevisionRecord {
  const value = (index: number) => values[at + index] as any;
  return {
    id: value(0),
    deploymentId: value(1),
    tenantId: value(2),
    number: value(3),
    status: value(4),
    statusMessage: value(5),
    failedStep: value(6),
    source: value(7),
    sourceConfig: value(8),
    sourceRevisionConfig: value(9),
    secretsEncrypted: value(10),
    repoCommitSha: value(11),
    imageRef: value(12) ?? null,
    imageDigest: value(13) ?? null,
    redeployedFromRevisionId: value(14),
    createdAt: value(15),
    updatedAt: value(16),
  };
}

export interface NewRevision {
  id: string;
  deploymentId: string;
  tenantId: string;
  source: string;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig;
  secretsEncrypted: string;
  redeployedFromRevisionId?: string | null;
  /** A redeploy's: the commit its earlier revision was built from, which the clone fetches instead of the ref's tip. */
  repoCommitSha?: string | null;
}

export interface LogLine {
  id: string;
  timestamp: string;
  level: string;
  message: string;
}

export class RevisionRepository {
  constructor(private readonly db: DbOrTx) {}

  /** Inserts with the next number of the deployment (the caller holds the deployment row lock). */
  async insert(revision: NewRevision): Promise<RevisionRecord> {
    const next = await this.db('revisions')
      .where({ deployment_id: revision.deploymentId })
      .max<{ max: number | null }[]>('number as max');
    const [row] = await this.db('revisions')
      .insert({
        id: revision.id,
        deployment_id: revision.deploymentId,
        tenant_id: revision.tenantId,
        number: (next[0]?.max ?? 0) + 1,
        status: 'CREATING',
        source: revision.source,
        source_config: JSON.stringify(revision.sourceConfig),
        source_revision_config: JSON.stringify(revision.sourceRevisionConfig),
        secrets_encrypted: revision.secretsEncrypted,
        redeployed_from_revision_id: revision.redeployedFromRevisionId ?? null,
        repo_commit_sha: revision.repoCommitSha ?? null,
      })
      .returning('*');
    return toRevision(row);
  }

  async find(deploymentId: string, id: string): Promise<RevisionRecord | null> {
    const row = await this.db('revisions').where({ id, deployment_id: deploymentId }).first();
    return row ? toRevision(row) : null;
  }

  async list(deploymentId: string, filters: { statuses?: string[]; limit: number; offset: number }): Promise<RevisionRecord[]> {
    const query = this.db('revisions').where({ deployment_id: deploymentId });
    if (filters.statuses?.length) query.whereIn('status', filters.statuses);
    const rows = await query.orderBy('number', 'desc').limit(filters.limit).offset(filters.offset);
    return rows.map(toRevision);
  }

  /**
   * A revision of a live deployment of `tenantId`, in one query (the reads CI polls). Null when either is missing;
   * the caller tells which.
   */
  async findOfTenant(tenantId: string, deploymentId: string, id: string): Promise<RevisionRecord | null> {
    const [row] = await revisionOfTenant.values(this.db, [tenantId, deploymentId, id]);
    return row ? revisionFromValues(row) : null;
  }

  /**
   * A page of a live deployment of `tenantId`, newest first, as (id, row version) only: what a cache of serialized
   * views needs to know is still good. One text, `id:version` pairs joined by commas (`pageVersions` splits it); ''
   * for an empty page, which may mean no such deployment.
   */
  async pageOfTenant(
    tenantId: string,
    deploymentId: string,
    filters: { statuses?: string[]; limit: number; offset: number },
  ): Promise<string> {
    const [row] = filters.statuses?.length
      ? await revisionPageOfTenantWithStatus.values(this.db, [
          tenantId,
          deploymentId,
          filters.statuses,
          filters.limit,
          filters.offset,
        ])
      : await revisionPageOfTenant.values(this.db, [tenantId, deploymentId, filters.limit, filters.offset]);
    return (row?.[0] as string | null) ?? '';
  }

  /**
   * The row version of a revision of a live deployment of `tenantId` (null when either is missing): what GET revision
   * reads when its serialized view is cached.
   */
  async versionOfTenant(tenantId: string, deploymentId: string, id: string): Promise<string | null> {
    const [row] = await revisionVersionOfTenant.values(this.db, [tenantId, deploymentId, id]);
    return row ? (row[0] as string) : null;
  }

  /** The revisions in `ids` that exist, each with its row version. */
  async findWithVersions(ids: string[]): Promise<Array<{ revision: RevisionRecord; version: string }>> {
    const rows = await revisionsWithVersion.values(this.db, [ids]);
    return rows.map((row) => ({ revision: revisionFromValues(row), version: row[REVISION_COLUMNS.length] as string }));
  }

  /** The current status of each revision in `ids` that exists (the long poll's one shared read). */
  async statusesOf(ids: string[]): Promise<Map<string, RevisionStatus>> {
    const rows: Array<{ id: string; status: RevisionStatus }> = await this.db('revisions')
      .whereIn('id', ids)
      .select('id', 'status');
    return new Map(rows.map((row) => [row.id, row.status]));
  }

  async logs(revisionId: string, options: { order: 'asc' | 'desc'; limit: number; offset: number }): Promise<LogLine[]> {
    const rows = await this.db('revision_logs')
      .where({ revision_id: revisionId })
      .orderBy('id', options.order)
      .limit(options.limit)
      .offset(options.offset);
    return rows.map(toLogLine);
  }

  /** Adds lines to a revision's log (the create/PATCH warnings; the pipeline's steps write theirs in batches). */
  /** Log lines of several revisions and levels at once (a step's buffered progress). */
  async insertLogRows(rows: Array<{ revision_id: string; level: string; message: string }>): Promise<void> {
    if (rows.length > 0) await this.db.batchInsert('revision_logs', rows, 500);
  }

  async appendLogs(revisionId: string, level: 'info' | 'warn' | 'error', messages: string[]): Promise<void> {
    if (messages.length === 0) return;
    await this.db('revision_logs').insert(messages.map((message) => ({ revision_id: revisionId, level, message })));
  }

  async appLogs(deploymentId: string, options: { order: 'asc' | 'desc'; limit: number; offset: number }): Promise<LogLine[]> {
    const rows = await this.db('app_logs')
      .where({ deployment_id: deploymentId })
      .orderBy('id', options.order)
      .limit(options.limit)
      .offset(options.offset);
    return rows.map(toLogLine);
  }
}

function toLogLine(row: Record<string, any>): LogLine {
  return { id: String(row.id), timestamp: new Date(row.timestamp).toISOString(), level: row.level, message: row.message };
}
