/** What the benchmarks share. */
import crypto from 'node:crypto';
import type { Db } from '../src/db/knex';
import { ApiKeyRepository, generateApiKey } from '../src/db/repositories/apiKeys';

/** A new tenant with one API key. */
export async function createTenant(db: Db): Promise<{ tenantId: string; apiKey: string }> {
  const repository = new ApiKeyRepository(db);
  const tenant = await repository.ensureTenant(`bench-${crypto.randomBytes(4).toString('hex')}`);
  const apiKey = generateApiKey();
  await repository.addKey(tenant.id, apiKey, 'bench');
  return { tenantId: tenant.id, apiKey };
}
