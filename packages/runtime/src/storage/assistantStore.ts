/**
 * Assistants in the deployment's database: the current row in `graphx_assistants`, every version in
 * `graphx_assistant_versions`. A patch writes a new version and makes it current; "set latest" points the current
 * row back at an older version. Auth filters are JSONB containment objects applied as `metadata @> filter`, so an
 * assistant outside the caller's filter is indistinguishable from a missing one.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from './transaction';
import { ConflictError, NotFoundError } from '@graphx/kit/errors';
import type { Assistant } from '../graphs';

export type ContainmentFilter = Record<string, unknown>;

export interface AssistantFields {
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface AssistantQuery {
  graph_id?: string;
  /** Case-insensitive substring of the name. */
  name?: string;
  metadata?: Record<string, unknown>;
}

export const ASSISTANT_SORT_FIELDS = ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'] as const;

export interface AssistantSearch extends AssistantQuery {
  limit: number;
  offset: number;
  sort_by: (typeof ASSISTANT_SORT_FIELDS)[number];
  sort_order: 'asc' | 'desc';
}

export type AssistantVersion = Omit<Assistant, 'updated_at'>;

const COLUMNS = 'assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at';
const VERSION_COLUMNS = 'assistant_id, graph_id, name, description, config, context, metadata, version, created_at';

function toAssistant(row: Record<string, any>): Assistant {
  return {
    assistant_id: row.assistant_id,
    graph_id: row.graph_id,
    name: row.name,
    description: row.description ?? null,
    config: row.config ?? {},
    context: row.context ?? {},
    metadata: row.metadata ?? {},
    version: Number(row.version),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at ?? row.created_at).toISOString(),
  };
}

function toVersion(row: Record<string, any>): AssistantVersion {
  const { updated_at: _unused, ...version } = toAssistant(row);
  return version;
}

const notFound = () => new NotFoundError('Assistant not found');

function searchConditions(query: AssistantQuery, filter: ContainmentFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [JSON.stringify(filter)];
  const conditions = ['metadata @> $1'];
  if (query.metadata) {
    params.push(JSON.stringify(query.metadata));
    conditions.push(`metadata @> $${params.length}`);
  }
  if (query.graph_id) {
    params.push(query.graph_id);
    conditions.push(`graph_id = $${params.length}`);
  }
  if (query.name) {
    // A substring, not a pattern: the client's % and _ are literal.
    params.push(query.name.toLowerCase());
    conditions.push(`strpos(lower(name), $${params.length}) > 0`);
  }
  return { where: conditions.join(' AND '), params };
}

export class AssistantStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Writes the system assistants of graphx.json (their ids are stable across restarts) and drops those of graphs
   * the application no longer has. Several instances start together, so both statements are idempotent.
   */
  async syncSystemAssistants(assistants: Assistant[]): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      for (const assistant of assistants) {
        const inserted = await client.query(
          `INSERT INTO graphx_assistants (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, now(), now())
             ON CONFLICT (assistant_id) DO UPDATE SET description = EXCLUDED.description, config = EXCLUDED.config,
               context = EXCLUDED.context
           RETURNING xmax = 0 AS fresh`,
          this.fieldParams(assistant.assistant_id, assistant),
        );
        if (inserted.rows[0]?.fresh) await this.insertVersion(client, assistant.assistant_id, 1, assistant);
        else {
          await client.query('UPDATE graphx_assistant_versions SET config = $2, context = $3 WHERE assistant_id = $1', [
            assistant.assistant_id,
            JSON.stringify(assistant.config),
            JSON.stringify(assistant.context),
          ]);
        }
      }
      await client.query(
        `DELETE FROM graphx_assistants WHERE metadata @> '{"created_by":"system"}' AND NOT (assistant_id = ANY($1::uuid[]))`,
        [assistants.map((assistant) => assistant.assistant_id)],
      );
    });
  }

  /**
   * Creates an assistant at version 1. An existing id is a conflict with `if_exists: raise`, and is returned as it is
   * with `do_nothing` — unless it lies outside the caller's filter, which is always a conflict (never a leak).
   */
  async create(
    assistantId: string,
    fields: AssistantFields,
    ifExists: 'raise' | 'do_nothing',
    filter: ContainmentFilter,
  ): Promise<Assistant> {
    return inTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        `INSERT INTO graphx_assistants (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, now(), now())
           ON CONFLICT (assistant_id) DO NOTHING RETURNING ${COLUMNS}`,
        this.fieldParams(assistantId, fields),
      );
      if (inserted.rows[0]) {
        await this.insertVersion(client, assistantId, 1, fields);
        return toAssistant(inserted.rows[0]);
      }
      const existing = await client.query(`SELECT ${COLUMNS} FROM graphx_assistants WHERE assistant_id = $1 AND metadata @> $2`, [
        assistantId,
        JSON.stringify(filter),
      ]);
      if (ifExists === 'raise' || !existing.rows[0]) throw new ConflictError('Assistant already exists');
      return toAssistant(existing.rows[0]);
    });
  }

  async get(assistantId: string, filter: ContainmentFilter): Promise<Assistant> {
    const result = await this.pool.query(`SELECT ${COLUMNS} FROM graphx_assistants WHERE assistant_id = $1 AND metadata @> $2`, [
      assistantId,
      JSON.stringify(filter),
    ]);
    if (!result.rows[0]) throw notFound();
    return toAssistant(result.rows[0]);
  }

  /** Writes a new version from the current one with `changes` applied (metadata merged) and makes it current. */
  async patch(assistantId: string, changes: Partial<AssistantFields>, filter: ContainmentFilter): Promise<Assistant> {
    return inTransaction(this.pool, async (client) => {
      const current = await client.query(
        `SELECT ${COLUMNS} FROM graphx_assistants WHERE assistant_id = $1 AND metadata @> $2 FOR UPDATE`,
        [assistantId, JSON.stringify(filter)],
      );
      if (!current.rows[0]) throw notFound();
      const before = toAssistant(current.rows[0]);
      const next: AssistantFields = {
        graph_id: changes.graph_id ?? before.graph_id,
        name: changes.name ?? before.name,
        description: changes.description ?? before.description,
        config: changes.config ?? before.config,
        context: changes.context ?? before.context,
        metadata: changes.metadata ? { ...before.metadata, ...changes.metadata } : before.metadata,
      };
      const newest = await client.query('SELECT max(version) AS version FROM graphx_assistant_versions WHERE assistant_id = $1', [
        assistantId,
      ]);
      const version = Number(newest.rows[0]?.version ?? before.version) + 1;
      await this.insertVersion(client, assistantId, version, next);
      return this.makeCurrent(client, assistantId, version, next);
    });
  }

  /** Points the assistant at one of its versions. */
  async setLatest(assistantId: string, version: number, filter: ContainmentFilter): Promise<Assistant> {
    return inTransaction(this.pool, async (client) => {
      const current = await client.query(
        'SELECT 1 FROM graphx_assistants WHERE assistant_id = $1 AND metadata @> $2 FOR UPDATE',
        [assistantId, JSON.stringify(filter)],
      );
      if (!current.rows[0]) throw notFound();
      const chosen = await client.query(
        `SELECT ${VERSION_COLUMNS} FROM graphx_assistant_versions WHERE assistant_id = $1 AND version = $2`,
        [assistantId, version],
      );
      if (!chosen.rows[0]) throw new NotFoundError('Assistant version not found');
      return this.makeCurrent(client, assistantId, version, toVersion(chosen.rows[0]));
    });
  }

  /** Deletes the assistant, its versions (cascade) and its runs; false when no visible assistant has that id. */
  async delete(assistantId: string, filter: ContainmentFilter): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM graphx_assistants WHERE assistant_id = $1 AND metadata @> $2', [
      assistantId,
      JSON.stringify(filter),
    ]);
    if (result.rowCount === 0) return false;
    await this.pool.query("DELETE FROM graphx_runs WHERE assistant_id = $1 AND status NOT IN ('pending', 'running')", [
      assistantId,
    ]);
    return true;
  }

  async search(query: AssistantSearch, filter: ContainmentFilter): Promise<{ assistants: Assistant[]; total: number }> {
    const { where, params } = searchConditions(query, filter);
    // sort_by and sort_order are validated enums, so interpolating them is safe.
    const result = await this.pool.query(
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM graphx_assistants WHERE ${where}
        ORDER BY ${query.sort_by} ${query.sort_order}, assistant_id LIMIT ${query.limit} OFFSET ${query.offset}`,
      params,
    );
    return { assistants: result.rows.map(toAssistant), total: Number(result.rows[0]?.total ?? 0) };
  }

  async count(query: AssistantQuery, filter: ContainmentFilter): Promise<number> {
    const { where, params } = searchConditions(query, filter);
    const result = await this.pool.query(`SELECT count(*) AS total FROM graphx_assistants WHERE ${where}`, params);
    return Number(result.rows[0].total);
  }

  /** Versions newest first; empty when no visible assistant has that id. */
  async versions(
    assistantId: string,
    query: { metadata?: Record<string, unknown>; limit: number; offset: number },
    filter: ContainmentFilter,
  ): Promise<AssistantVersion[]> {
    const result = await this.pool.query(
      `SELECT ${VERSION_COLUMNS} FROM graphx_assistant_versions v
        WHERE assistant_id = $1 AND metadata @> $2 AND metadata @> $3
          AND EXISTS (SELECT 1 FROM graphx_assistants a WHERE a.assistant_id = v.assistant_id AND a.metadata @> $2)
        ORDER BY version DESC LIMIT ${query.limit} OFFSET ${query.offset}`,
      [assistantId, JSON.stringify(filter), JSON.stringify(query.metadata ?? {})],
    );
    return result.rows.map(toVersion);
  }

  private async makeCurrent(
    client: PoolClient,
    assistantId: string,
    version: number,
    fields: AssistantFields,
  ): Promise<Assistant> {
    const updated = await client.query(
      `UPDATE graphx_assistants SET graph_id = $2, name = $3, description = $4, config = $5, context = $6, metadata = $7,
         version = $8, updated_at = now() WHERE assistant_id = $1 RETURNING ${COLUMNS}`,
      [...this.fieldParams(assistantId, fields), version],
    );
    return toAssistant(updated.rows[0]);
  }

  private async insertVersion(client: PoolClient, assistantId: string, version: number, fields: AssistantFields): Promise<void> {
    await client.query(
      `INSERT INTO graphx_assistant_versions (${VERSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
         ON CONFLICT DO NOTHING`,
      [...this.fieldParams(assistantId, fields), version],
    );
  }

  private fieldParams(assistantId: string, fields: AssistantFields): unknown[] {
    return [
      assistantId,
      fields.graph_id,
      fields.name,
      fields.description,
      JSON.stringify(fields.config),
      JSON.stringify(fields.context),
      JSON.stringify(fields.metadata),
    ];
  }
}
