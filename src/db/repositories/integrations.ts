/** Code-host integrations (app installations), each tied to the token that a successful code exchange produced. */
import type { DbOrTx } from '../knex';

export interface CodehostIntegrationRecord {
  id: string;
  tenantId: string;
  providerPk: string;
  /** The provider's slug, joined in for listings. */
  providerId: string;
  installationId: number;
  tokenId: string;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = ['codehost_integrations.*', 'oauth_providers.provider_id as provider_slug'];

export function toCodehostIntegration(row: Record<string, any>): CodehostIntegrationRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    providerPk: row.provider_pk,
    providerId: row.provider_slug,
    installationId: Number(row.installation_id),
    tokenId: row.token_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class CodehostIntegrationRepository {
  constructor(private readonly db: DbOrTx) {}

  /**
   * Records the installation, or points an existing one (same tenant, provider and installation) at the new token:
   * installing again re-authorizes rather than duplicating. Returns the integration id.
   */
  async upsert(integration: {
    id: string;
    tenantId: string;
    providerPk: string;
    installationId: number;
    tokenId: string;
  }): Promise<string> {
    const [row] = await this.db('codehost_integrations')
      .insert({
        id: integration.id,
        tenant_id: integration.tenantId,
        provider_pk: integration.providerPk,
        installation_id: integration.installationId,
        token_id: integration.tokenId,
      })
      .onConflict(['tenant_id', 'provider_pk', 'installation_id'])
      .merge({ token_id: integration.tokenId, updated_at: this.db.fn.now() })
      .returning('id');
    return row.id as string;
  }

  async find(tenantId: string, id: string): Promise<CodehostIntegrationRecord | null> {
    const row = await this.db('codehost_integrations')
      .join('oauth_providers', 'oauth_providers.id', 'codehost_integrations.provider_pk')
      .where({ 'codehost_integrations.tenant_id': tenantId, 'codehost_integrations.id': id })
      .first(COLUMNS);
    return row ? toCodehostIntegration(row) : null;
  }

  async list(tenantId: string, page: { limit: number; offset: number }): Promise<CodehostIntegrationRecord[]> {
    const rows = await this.db('codehost_integrations')
      .join('oauth_providers', 'oauth_providers.id', 'codehost_integrations.provider_pk')
      .where({ 'codehost_integrations.tenant_id': tenantId })
      .orderBy([{ column: 'codehost_integrations.created_at', order: 'asc' }, { column: 'codehost_integrations.id' }])
      .limit(page.limit)
      .offset(page.offset)
      .select(COLUMNS);
    return rows.map(toCodehostIntegration);
  }
}
