/** OAuth providers of a tenant. The client secret stays encrypted here; services decrypt it only to use it. */
import type { DbOrTx } from '../knex';

export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface OAuthProviderRecord {
  id: string;
  tenantId: string;
  providerId: string;
  name: string;
  clientId: string;
  clientSecretEncrypted: string | null;
  authUrl: string;
  tokenUrl: string;
  usesPkce: boolean;
  codeChallengeMethod: string | null;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  providerType: string | null;
  mcpServerUrl: string | null;
  isDynamicClient: boolean;
  /** The secret its webhook deliveries are signed with, encrypted; null: none set (push webhooks refused). */
  webhookSecretEncrypted: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Fields a PATCH may change (already validated and, for the secret, encrypted). */
export type OAuthProviderChanges = Partial<
  Pick<
    OAuthProviderRecord,
    | 'name'
    | 'clientId'
    | 'clientSecretEncrypted'
    | 'authUrl'
    | 'tokenUrl'
    | 'usesPkce'
    | 'codeChallengeMethod'
    | 'webhookSecretEncrypted'
  >
>;

export function toOAuthProvider(row: Record<string, any>): OAuthProviderRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    providerId: row.provider_id,
    name: row.name,
    clientId: row.client_id,
    clientSecretEncrypted: row.client_secret_encrypted,
    authUrl: row.auth_url,
    tokenUrl: row.token_url,
    usesPkce: row.uses_pkce,
    codeChallengeMethod: row.code_challenge_method,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    providerType: row.provider_type,
    mcpServerUrl: row.mcp_server_url,
    isDynamicClient: row.is_dynamic_client,
    webhookSecretEncrypted: row.webhook_secret_encrypted ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const COLUMN_OF: Record<keyof OAuthProviderChanges, string> = {
  name: 'name',
  clientId: 'client_id',
  clientSecretEncrypted: 'client_secret_encrypted',
  authUrl: 'auth_url',
  tokenUrl: 'token_url',
  usesPkce: 'uses_pkce',
  codeChallengeMethod: 'code_challenge_method',
  webhookSecretEncrypted: 'webhook_secret_encrypted',
};

export class OAuthProviderRepository {
  constructor(private readonly db: DbOrTx) {}

  /** Inserts the provider; a taken `provider_id` surfaces as PostgreSQL's unique violation (23505). */
  async insert(provider: Omit<OAuthProviderRecord, 'createdAt' | 'updatedAt'>): Promise<OAuthProviderRecord> {
    const [row] = await this.db('oauth_providers')
      .insert({
        id: provider.id,
        tenant_id: provider.tenantId,
        provider_id: provider.providerId,
        name: provider.name,
        client_id: provider.clientId,
        client_secret_encrypted: provider.clientSecretEncrypted,
        auth_url: provider.authUrl,
        token_url: provider.tokenUrl,
        uses_pkce: provider.usesPkce,
        code_challenge_method: provider.codeChallengeMethod,
        token_endpoint_auth_method: provider.tokenEndpointAuthMethod,
        provider_type: provider.providerType,
        mcp_server_url: provider.mcpServerUrl,
        is_dynamic_client: provider.isDynamicClient,
        webhook_secret_encrypted: provider.webhookSecretEncrypted,
      })
      .returning('*');
    return toOAuthProvider(row);
  }

  /** The tenant's provider with that slug, or null (another tenant's reads as missing). */
  async findBySlug(tenantId: string, providerId: string): Promise<OAuthProviderRecord | null> {
    const row = await this.db('oauth_providers').where({ tenant_id: tenantId, provider_id: providerId }).first();
    return row ? toOAuthProvider(row) : null;
  }

  /** A provider by its id whatever its tenant (a webhook delivery names only the provider; its signature decides). */
  async findByIdOfAnyTenant(id: string): Promise<OAuthProviderRecord | null> {
    const row = await this.db('oauth_providers').where({ id }).first();
    return row ? toOAuthProvider(row) : null;
  }

  async findById(tenantId: string, id: string): Promise<OAuthProviderRecord | null> {
    const row = await this.db('oauth_providers').where({ tenant_id: tenantId, id }).first();
    return row ? toOAuthProvider(row) : null;
  }

  async list(tenantId: string, page: { limit: number; offset: number }): Promise<OAuthProviderRecord[]> {
    const rows = await this.db('oauth_providers')
      .where({ tenant_id: tenantId })
      .orderBy([{ column: 'created_at', order: 'asc' }, { column: 'id' }])
      .limit(page.limit)
      .offset(page.offset);
    return rows.map(toOAuthProvider);
  }

  async update(tenantId: string, id: string, changes: OAuthProviderChanges): Promise<OAuthProviderRecord | null> {
    const columns: Record<string, unknown> = { updated_at: this.db.fn.now() };
    for (const [field, value] of Object.entries(changes)) {
      if (value !== undefined) columns[COLUMN_OF[field as keyof OAuthProviderChanges]] = value;
    }
    const [row] = await this.db('oauth_providers').where({ tenant_id: tenantId, id }).update(columns).returning('*');
    return row ? toOAuthProvider(row) : null;
  }

  /** Deletes the provider (its attempts, tokens and integrations cascade); false when there was none. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return (await this.db('oauth_providers').where({ tenant_id: tenantId, id }).delete()) > 0;
  }
}
