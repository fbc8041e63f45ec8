/**
 * Real parts for runtime tests: a fresh PostgreSQL database per test file, the runtime as a child process
 * (`graphx dev` or `graphx runtime`, exactly as a rollout starts it) on a free port, and a real control-plane API.
 */
import { Client } from '@langchain/langgraph-sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { createApp } from '../../../../../src/api/app';
import type { Db } from '../../../../../src/db/knex';
import { findFreePort, waitFor } from '@graphx/kit/net/ports';
import { hashToken } from '../../../../../src/security/secretBox';
import { testConfig, testDb, testSecretBox, testTemporalClient } from '../../../../../test/support/env';

export const projectRoot = path.resolve(__dirname, '..', '..', '..', '..', '..');
export const fixtureConfig = (app: string) => path.join(projectRoot, 'test', 'fixtures', 'apps', app, 'graphx.json');

function adminUrl(): string {
  return process.env.GRAPHX_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** A new empty database; `drop()` removes it (closing any connection left). */
export async function createTestDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gx_rt_${label}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new PgClient({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  return {
    url: adminUrl().replace(/\/[^/]*$/, `/${name}`),
    drop: async () => {
      const client = new PgClient({ connectionString: adminUrl() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface RuntimeProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<number | null>;
}

/** Spawns `graphx <args>` and resolves once GET /ok answers 200. */
export async function spawnRuntime(options: {
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  port: number;
  startTimeoutMs?: number;
  /** The Node that runs it (default: the one running the tests). */
  nodeBinary?: string;
}): Promise<RuntimeProcess> {
  const child = spawn(options.nodeBinary ?? process.execPath, [path.join(projectRoot, 'bin', 'graphx.js'), ...options.args], {
    cwd: options.cwd ?? projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GRAPHX_LOG_LEVEL: 'warn',
      // One cache of Python environments for every test app: apps with the same requirements share one.
      GRAPHX_PYTHON_ENVS_DIR: path.join(projectRoot, '.test-data', 'python-envs'),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${options.port}`;
  // A runtime that exits while starting fails the start at once (waitFor would take the exit for "not yet").
  let exited: (() => void) | null = null;
  const exit = new Promise<never>((_resolve, reject) => {
    exited = () => reject(new Error(`the runtime exited with ${child.exitCode ?? child.signalCode} while starting`));
    child.once('exit', exited);
  });
  try {
    await Promise.race([
      exit,
      waitFor(
        'the runtime to answer /ok',
        async () => (await fetch(`${url}/ok`)).status === 200,
        options.startTimeoutMs ?? RUNTIME_START_MS,
        100,
      ),
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output}`);
  } finally {
    if (exited) child.off('exit', exited);
  }
  return {
    url,
    port: options.port,
    child,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        // A runtime that died of a signal has no exit code, and its `exit` has been emitted already.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

/** `graphx dev --config <app>` on a free port and the given database. */
export async function startDevRuntime(
  app: string,
  databaseUrl: string,
  env: Record<string, string> = {},
  nodeBinary?: string,
): Promise<RuntimeProcess> {
  const port = await findFreePort();
  return spawnRuntime({
    args: ['dev', '--config', fixtureConfig(app), '--port', String(port)],
    env: { DATABASE_URI: databaseUrl, ...env },
    port,
    nodeBinary,
  });
}

/** `graphx dev` on a fixture over a fresh database, with a client: what most runtime test files start per suite. */
export interface DevApp {
  database: { url: string; drop: () => Promise<void> };
  runtime: RuntimeProcess;
  client: Client;
}

/** Several `graphx dev` instances of one fixture over one fresh database (as a revision's instances share one). */
export interface DevApps {
  database: { url: string; drop: () => Promise<void> };
  runtimes: RuntimeProcess[];
  clients: Client[];
}

/**
 * Starts `count` instances before the enclosing describe block's tests — together, as a revision's instances start,
 * so their first starts race for the new database's schema — and stops them (then the database) after the tests;
 * with `cleanExit`, each must exit with 0. The returned object is filled in by then: read it inside tests and hooks.
 */
export function devAppsForSuite(
  label: string,
  app: string,
  options: { count?: number; env?: Record<string, string>; cleanExit?: boolean } = {},
): DevApps {
  const suite: DevApps = { database: undefined as unknown as DevApps['database'], runtimes: [], clients: [] };
  beforeAll(async () => {
    suite.database = await createTestDatabase(label);
    const started = await Promise.allSettled(
      Array.from({ length: options.count ?? 1 }, () => startDevRuntime(app, suite.database.url, options.env)),
    );
    for (const outcome of started) if (outcome.status === 'fulfilled') suite.runtimes.push(outcome.value);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    suite.clients.push(...suite.runtimes.map((runtime) => new Client({ apiUrl: runtime.url, apiKey: null })));
  }, RUNTIME_START_MS + 30_000);
  afterAll(async () => {
    const codes = await Promise.all(suite.runtimes.map((runtime) => runtime.stop()));
    await suite.database?.drop();
    if (options.cleanExit) expect(codes).toEqual(suite.runtimes.map(() => 0));
  }, 60_000);
  return suite;
}

/** One instance: devAppsForSuite's first runtime and client. */
export function devAppForSuite(label: string, app: string, env: Record<string, string> = {}): DevApp {
  const apps = devAppsForSuite(label, app, { env });
  return {
    get database() {
      return apps.database;
    },
    get runtime() {
      return apps.runtimes[0] as RuntimeProcess;
    },
    get client() {
      return apps.clients[0] as Client;
    },
  };
}

/** A real control-plane API (createApp) on a loopback port. */
export async function startControlPlane(port = 0): Promise<{ url: string; port: number; db: Db; close: () => Promise<void> }> {
  const config = testConfig();
  const db = testDb();
  const temporal = await testTemporalClient();
  const app = createApp({ config, db, secretBox: testSecretBox(config), temporal });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const boundPort = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${boundPort}`,
    port: boundPort,
    db,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await temporal.connection.close();
      await db.destroy();
    },
  };
}

/** A deployment row of `tenantId` with a tracing project and a service token, as a rollout would have made them. */
export async function seedDeployment(
  db: Db,
  tenantId: string,
): Promise<{ deploymentId: string; projectId: string; serviceToken: string }> {
  const deploymentId = crypto.randomUUID();
  const projectId = crypto.randomUUID();
  const name = `rt-${crypto.randomBytes(4).toString('hex')}`;
  await db('tracing_projects').insert({ id: projectId, tenant_id: tenantId, name, deployment_id: deploymentId });
  await db('deployments').insert({
    id: deploymentId,
    tenant_id: tenantId,
    name,
    source: 'codehost',
    source_config: JSON.stringify({}),
    status: 'READY',
    tracing_project_id: projectId,
  });
  const serviceToken = `gxs_${crypto.randomBytes(24).toString('base64url')}`;
  await db('service_tokens').insert({
    id: crypto.randomUUID(),
    deployment_id: deploymentId,
    token_hash: hashToken(serviceToken),
  });
  return { deploymentId, projectId, serviceToken };
}

/** `graphx runtime` as a rollout starts it: cwd = application directory, the contract's environment. */
export async function startDeployedRuntime(options: {
  app: string;
  databaseUrl: string;
  controlPlaneUrl: string;
  deploymentId: string;
  tenantId: string;
  serviceToken: string;
}): Promise<RuntimeProcess> {
  const port = await findFreePort();
  const configPath = fixtureConfig(options.app);
  return spawnRuntime({
    args: ['runtime'],
    cwd: path.dirname(configPath),
    port,
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URI: options.databaseUrl,
      GRAPHX_CONFIG_PATH: configPath,
      GRAPHX_DEPLOYMENT_ID: options.deploymentId,
      GRAPHX_REVISION_ID: crypto.randomUUID(),
      GRAPHX_TENANT_ID: options.tenantId,
      GRAPHX_CONTROL_PLANE_URL: options.controlPlaneUrl,
      GRAPHX_SERVICE_TOKEN: options.serviceToken,
    },
  });
}

/** Reads an SSE response into `{event, data}` pairs, checking every event is one compact `data:` line. */
export async function readSse(response: Response): Promise<Array<{ event: string; data: unknown }>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      if (lines.length !== 2 || !lines[0]!.startsWith('event: ') || !lines[1]!.startsWith('data: ')) {
        throw new Error(`not one event line and one data line: ${JSON.stringify(block)}`);
      }
      return { event: lines[0]!.slice('event: '.length), data: JSON.parse(lines[1]!.slice('data: '.length)) };
    });
}

/** The languages graphs are written in: every agent-server test runs over the JavaScript fixtures and their Python twins. */
export type GraphLanguage = 'javascript' | 'python';

/** The languages to test (GRAPHX_TEST_LANGUAGES=javascript,python narrows it while developing). */
export function graphLanguages(): GraphLanguage[] {
  const chosen = (process.env.GRAPHX_TEST_LANGUAGES ?? 'javascript,python').split(',').map((item) => item.trim());
  return (['javascript', 'python'] as const).filter((language) => chosen.includes(language));
}

/** A runtime fixture in `language`: the Python twin of `runtime-x` is `runtime-x-py`. */
export function fixtureIn(app: string, language: GraphLanguage): string {
  return language === 'python' ? `${app}-py` : app;
}

/** How long a runtime may take to start: a Python app's first start builds its virtual environment (cached after). */
export const RUNTIME_START_MS = 240_000;
