/** What the benchmarks share. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../src/db/knex';
import { ApiKeyRepository, generateApiKey } from '../src/db/repositories/apiKeys';
import { testPostgres } from '../test/support/testPostgres';

/** A new tenant with one API key. */
export async function createTenant(db: Db): Promise<{ tenantId: string; apiKey: string }> {
  const repository = new ApiKeyRepository(db);
  const tenant = await repository.ensureTenant(`bench-${crypto.randomBytes(4).toString('hex')}`);
  const apiKey = generateApiKey();
  await repository.addKey(tenant.id, apiKey, 'bench');
  return { tenantId: tenant.id, apiKey };
}

let adminUrl: Promise<string> | null = null;

/**
 * The PostgreSQL the benchmarks create their databases on: GRAPHX_BENCH_PG_ADMIN_URL, else the machine's at
 * 127.0.0.1:5432 when it lets `postgres` in, else an embedded one under the OS temp dir (as `npm test` does), left
 * running for the process's life.
 */
export function benchAdminUrl(): Promise<string> {
  adminUrl ??= (async () => {
    if (process.env.GRAPHX_BENCH_PG_ADMIN_URL) return process.env.GRAPHX_BENCH_PG_ADMIN_URL;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-bench-pg-'));
    const { adminUrl: url, embedded } = await testPostgres('postgres://postgres@127.0.0.1:5432/postgres', dir, undefined);
    if (embedded) process.once('exit', () => embedded.kill());
    return url;
  })();
  return adminUrl;
}
