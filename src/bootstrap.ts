/**
 * First start: with no API key at all, one is created for organization `default`, printed once and written to
 * `<dataDir>/api-key` (mode 0600). GRAPHX_BOOTSTRAP_API_KEY seeds that key instead (tests use it).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './db/knex';
import { ApiKeyRepository, generateApiKey } from './db/repositories/apiKeys';

export const DEFAULT_TENANT = 'default';

export interface BootstrapResult {
  apiKeyFile: string;
  /** The key, only when it was created by this call (to print once). */
  createdKey: string | null;
}

export async function ensureBootstrapApiKey(db: Db, dataDir: string, seededKey: string | null): Promise<BootstrapResult> {
  const apiKeyFile = path.join(dataDir, 'api-key');
  const repository = new ApiKeyRepository(db);
  const tenant = await repository.ensureTenant(DEFAULT_TENANT);
  if (seededKey) {
    await repository.addKey(tenant.id, seededKey, 'bootstrap');
    writeKeyFile(apiKeyFile, seededKey);
    return { apiKeyFile, createdKey: null };
  }
  if ((await repository.countKeys()) > 0) return { apiKeyFile, createdKey: null };
  const key = generateApiKey();
  await repository.addKey(tenant.id, key, 'bootstrap');
  writeKeyFile(apiKeyFile, key);
  return { apiKeyFile, createdKey: key };
}

function writeKeyFile(file: string, key: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}
