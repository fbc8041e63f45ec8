/** Tenants and their API keys. Keys are stored as SHA-256 digests only. */
import crypto from 'node:crypto';
import type { DbOrTx } from '../knex';
import { hashToken } from '../../security/secretBox';

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  tenantName: string;
  owner: string;
}

export interface Tenant {
  id: string;
  name: string;
}

/** A new random API key: `gx_` + 32 random bytes. */
export function generateApiKey(): string {
  return `gx_${crypto.randomBytes(32).toString('base64url')}`;
}

export class ApiKeyRepository {
  constructor(private readonly db: DbOrTx) {}

  async findByKey(key: string): Promise<ApiKeyRecord | null> {
    const row = await this.db('api_keys')
      .join('tenants', 'tenants.id', 'api_keys.tenant_id')
      .where({ 'api_keys.key_hash': hashToken(key) })
      .whereNull('api_keys.revoked_at')
      .first('api_keys.id', 'api_keys.tenant_id', 'tenants.name as tenant_name', 'api_keys.owner');
    return row ? { id: row.id, tenantId: row.tenant_id, tenantName: row.tenant_name, owner: row.owner } : null;
  }

  async ensureTenant(name: string): Promise<Tenant> {
    const existing = await this.db('tenants').where({ name }).first('id', 'name');
    if (existing) return existing;
    const id = crypto.randomUUID();
    await this.db('tenants').insert({ id, name }).onConflict('name').ignore();
    return (await this.db('tenants').where({ name }).first('id', 'name')) as Tenant;
  }

  /** Stores `key` for the tenant (idempotent on the key). */
  async addKey(tenantId: string, key: string, owner: string): Promise<void> {
    await this.db('api_keys')
      .insert({ id: crypto.randomUUID(), tenant_id: tenantId, key_hash: hashToken(key), key_prefix: key.slice(0, 8), owner })
      .onConflict('key_hash')
      .ignore();
  }

  async countKeys(): Promise<number> {
    const row = await this.db('api_keys').count<{ count: string }[]>('* as count').first();
    return Number(row?.count ?? 0);
  }
}
