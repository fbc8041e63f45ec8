/** What the benchmarks share. */
import { execFileSync } from 'node:child_process';
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

/** Makes `dir` a git repository (branch main) with everything in it committed; returns a git runner for it. */
export function initGitRepo(dir: string, message: string): (...args: string[]) => Buffer {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        GIT_AUTHOR_NAME: 'b',
        GIT_AUTHOR_EMAIL: 'b@b',
        GIT_COMMITTER_NAME: 'b',
        GIT_COMMITTER_EMAIL: 'b@b',
        HOME: dir,
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', message);
  return git;
}
