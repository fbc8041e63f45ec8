/** Authorization attempts: the server side of a `state`. Consuming one is a guarded, single-use update. */
import type { DbOrTx } from '../knex';

export type AttemptStatus = 'pending' | 'completed' | 'failed';

export interface OAuthAttemptRecord {
  id: string;
  tenantId: string;
  providerPk: string;
  scopes: string[];
  pkceVerifierEncrypted: string | null;
  redirectUri: string | null;
  status: AttemptStatus;
  failureReason: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
}

export function toOAuthAttempt(row: Record<string, any>): OAuthAttemptRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    providerPk: row.provider_pk,
    scopes: row.scopes,
    pkceVerifierEncrypted: row.pkce_verifier_encrypted,
    redirectUri: row.redirect_uri,
    status: row.status,
    failureReason: row.failure_reason,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
    finishedAt: row.finished_at,
    createdAt: row.created_at,
  };
}

export interface NewOAuthAttempt {
  id: string;
  tenantId: string;
  providerPk: string;
  scopes: string[];
  pkceVerifierEncrypted: string | null;
  redirectUri: string;
  expiresAt: Date;
}

export class OAuthAttemptRepository {
  constructor(private readonly db: DbOrTx) {}

  async insert(attempt: NewOAuthAttempt): Promise<void> {
    await this.db('oauth_attempts').insert({
      id: attempt.id,
      tenant_id: attempt.tenantId,
      provider_pk: attempt.providerPk,
      scopes: JSON.stringify(attempt.scopes),
      pkce_verifier_encrypted: attempt.pkceVerifierEncrypted,
      redirect_uri: attempt.redirectUri,
      status: 'pending',
      expires_at: attempt.expiresAt,
    });
  }

  /** Any tenant's attempt: only for callbacks, where the verified state is what names it. */
  async findForCallback(id: string): Promise<OAuthAttemptRecord | null> {
    const row = await this.db('oauth_attempts').where({ id }).first();
    return row ? toOAuthAttempt(row) : null;
  }

  async find(tenantId: string, id: string): Promise<OAuthAttemptRecord | null> {
    const row = await this.db('oauth_attempts').where({ tenant_id: tenantId, id }).first();
    return row ? toOAuthAttempt(row) : null;
  }

  /**
   * Marks the attempt's state used, once: only a pending, unused, unexpired attempt matches, so two callbacks racing
   * with the same state cannot both get past this line. Returns false when nothing matched.
   */
  async consume(id: string): Promise<boolean> {
    const updated = await this.db('oauth_attempts')
      .where({ id, status: 'pending' })
      .whereNull('used_at')
      .where('expires_at', '>', this.db.fn.now())
      .update({ used_at: this.db.fn.now() });
    return updated === 1;
  }

  async markCompleted(id: string): Promise<void> {
    await this.db('oauth_attempts')
      .where({ id, status: 'pending' })
      .update({ status: 'completed', finished_at: this.db.fn.now() });
  }

  async markFailed(id: string, reason: string): Promise<void> {
    await this.db('oauth_attempts')
      .where({ id, status: 'pending' })
      .update({
        status: 'failed',
        failure_reason: reason.slice(0, 500),
        used_at: this.db.fn.now(),
        finished_at: this.db.fn.now(),
      });
  }
}
