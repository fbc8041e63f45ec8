/** What a test needs from the shared run: config, database, Temporal client, tenants with keys. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type GraphxConfig } from '../../src/config';
import { createDb, type Db } from '../../src/db/knex';
import { ApiKeyRepository, generateApiKey } from '../../src/db/repositories/apiKeys';
import { SecretBox } from '../../src/security/secretBox';

export const testEnv = {
  databaseUrl: () => required('GRAPHX_TEST_DATABASE_URL'),
  temporalAddress: () => required('GRAPHX_TEST_TEMPORAL_ADDRESS'),
  workflowBundlePath: () => required('GRAPHX_TEST_WORKFLOW_BUNDLE'),
  runDir: () => required('GRAPHX_TEST_RUN_DIR'),
};

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tests with \`npm test\` (jest's globalSetup sets it)`);
  return value;
}

/** A fresh data dir under the run dir. */
export function makeDataDir(label: string): string {
  const dir = path.join(testEnv.runDir(), `${label}-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Configuration of a test stack: the run's database and Temporal, free ports, insecure local URLs allowed. */
export function testConfig(overrides: Record<string, string> = {}): GraphxConfig {
  return loadConfig(
    {},
    {
      PORT: '0',
      GRAPHX_GATEWAY_PORT: '0',
      GRAPHX_DATA_DIR: makeDataDir('data'),
      DATABASE_URL: testEnv.databaseUrl(),
      TEMPORAL_ADDRESS: testEnv.temporalAddress(),
      GRAPHX_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      // Stacks of a test run share one database and one Temporal namespace, but not their secret keys, data dirs or
      // runners: each polls task queues of its own, so no stack's worker takes another's activities.
      GRAPHX_TASK_QUEUE_PREFIX: `test-${crypto.randomBytes(4).toString('hex')}`,
      GRAPHX_ALLOW_FILE_REPOS: '1',
      GRAPHX_ALLOW_INSECURE_OAUTH: '1',
      GRAPHX_LOG_LEVEL: 'silent',
      GRAPHX_WORKER_METRICS_PORT: '0',
      // Stacks in tests run processes unless a test asks for containers (the container tests build their images).
      GRAPHX_RUNNER: 'process',
      ...overrides,
    },
  );
}

export function testDb(): Db {
  return createDb(testEnv.databaseUrl(), 5);
}

export function testSecretBox(config: GraphxConfig): SecretBox {
  return new SecretBox(Buffer.from(config.secretKey as string, 'hex'));
}

export async function testTemporalClient(): Promise<Client> {
  const connection = await Connection.connect({ address: testEnv.temporalAddress() });
  return new Client({ connection, namespace: 'default' });
}

/** A new tenant (organization) with one API key. */
export async function createTenant(db: Db, label = 'tenant'): Promise<{ tenantId: string; apiKey: string }> {
  const repository = new ApiKeyRepository(db);
  const tenant = await repository.ensureTenant(`${label}-${crypto.randomBytes(4).toString('hex')}`);
  const apiKey = generateApiKey();
  await repository.addKey(tenant.id, apiKey, `${label}-owner`);
  return { tenantId: tenant.id, apiKey };
}
