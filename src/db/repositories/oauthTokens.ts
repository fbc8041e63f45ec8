/** OAuth tokens, encrypted at rest. Callers hand in and get back only ciphertext; SecretBox is the services' job. */
import type { DbOrTx } from '../knex';

export interface OAuthTokenRecord {
  id: string;
  tenantId: string;
  providerPk: string;
  attemptId: string | null;
  accessTokenEncrypted: string;
  refreshTokenEncrypted: string | null;
  tokenType: string | null;
  scopes: string[] | null;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a token endpoint gave us, already encrypted. */
export interface EncryptedTokenSet {
  accessTokenEncrypted: string;
  refreshTokenEncrypted: string | null;
  tokenType: string | null;
  scopes: string[] | null;
  expiresAt: Date | null;
}

export function toOAuthToken(row: Record<string, any>): OAuthTokenRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    providerPk: row.provider_pk,
    attemptId: row.attempt_id,
    accessTokenEncrypted: row.access_token_encrypted,
    refreshTokenEncrypted: row.refresh_token_encrypted,
    tokenType: row.token_type,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class OAuthTokenRepository {
  constructor(private readonly db: DbOrTx) {}

  async insert(
    token: { id: string; tenantId: string; providerPk: string; attemptId: string | null } & EncryptedTokenSet,
  ): Promise<void> {
    await this.db('oauth_tokens').insert({
      id: token.id,
      tenant_id: token.tenantId,
      provider_pk: token.providerPk,
      attempt_id: token.attemptId,
      access_token_encrypted: token.accessTokenEncrypted,
      refresh_token_encrypted: token.refreshTokenEncrypted,
      token_type: token.tokenType,
      scopes: token.scopes ? JSON.stringify(token.scopes) : null,
      expires_at: token.expiresAt,
    });
  }

  /** `forUpdate` locks the row for the caller's transaction, so only one refresh of a token runs at a time. */
  async find(tenantId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<OAuthTokenRecord | null> {
    const query = this.db('oauth_tokens').where({ tenant_id: tenantId, id }).first();
    if (options.forUpdate) query.forUpdate();
    const row = await query;
    return row ? toOAuthToken(row) : null;
  }

  async findByAttempt(tenantId: string, attemptId: string): Promise<OAuthTokenRecord | null> {
    const row = await this.db('oauth_tokens').where({ tenant_id: tenantId, attempt_id: attemptId }).first();
    return row ? toOAuthToken(row) : null;
  }

  /** Replaces the token set after a refresh. A refresh response may omit the refresh token: keep the old one then. */
  async replace(tenantId: string, id: string, tokens: EncryptedTokenSet): Promise<void> {
    await this.db('oauth_tokens')
      .where({ tenant_id: tenantId, id })
      .update({
        access_token_encrypted: tokens.accessTokenEncrypted,
        ...(tokens.refreshTokenEncrypted ? { refresh_token_encrypted: tokens.refreshTokenEncrypted } : {}),
        token_type: tokens.tokenType,
        ...(tokens.scopes ? { scopes: JSON.stringify(tokens.scopes) } : {}),
        expires_at: tokens.expiresAt,
        updated_at: this.db.fn.now(),
      });
  }
}
