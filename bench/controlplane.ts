/**
 * Control-plane reads that CI polls, at 32 keep-alive connections, side by side with a bare Koa + pg primary-key
 * lookup on the same database: `GET /ok`, `GET deployment`, `GET revision`, `GET revisions` (a page of the newest).
 * Rows are seeded directly (10 and then 10,000 deployments; then 500 revisions on each read deployment, with
 * in-progress and failed statuses that once meant a workflow query each). No Temporal server runs: the reads do not
 * use it (test/integration/api/revisionReads.test.ts checks that). The request log is on, written to /dev/null.
 * Each figure is the median of alternating rounds (BENCH_CONTROLPLANE_ROUNDS, BENCH_CONTROLPLANE_SECONDS).
 * Each figure also gives the main thread's CPU per request (both servers run there, the load generator does not): a
 * read's cost with less of the shared machine's noise than req/s. A page of revisions is also set beside a bare read of
 * the same rows (pg's rows as JSON): the one-row lookup is no fair measure of a 20-row answer, which costs the bare
 * server itself about twice its one-row CPU.
 * Targets (issues 12, 24): ≥ 70% of the bare lookup's req/s, p99 < 25 ms, flat across the scenarios. Prints figures;
 * asserts nothing.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Router from '@koa/router';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import Koa from 'koa';
import { Client as PgClient, Pool } from 'pg';
import { createApp } from '../src/api/app';
import { loadConfig } from '../src/config';
import { createDb, migrateToLatest, type Db } from '../src/db/knex';
import { REVISION_COLUMNS } from '../src/db/repositories/revisions';
import { createLogger } from '@graphx/kit/logger';
import { loadSecretKey, SecretBox } from '../src/security/secretBox';
import { measure, type LoadResult } from './loadGenerator';
import { benchAdminUrl, createTenant } from './support';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_CONTROLPLANE_SECONDS ?? 1.5);
/** Each read and its bare baseline are measured this many times, alternating; the medians are printed. */
const ROUNDS = Number(process.env.BENCH_CONTROLPLANE_ROUNDS ?? 3);
const READ_DEPLOYMENTS = 10;
const STATUSES = ['DEPLOYED', 'BUILD_FAILED', 'BUILDING', 'SKIPPED', 'DEPLOY_FAILED', 'QUEUED'];

function listen(callback: http.RequestListener): Promise<http.Server> {
  const server = http.createServer({ keepAliveTimeout: 30_000 }, callback);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
const portOf = (server: http.Server) => (server.address() as AddressInfo).port;

/** The baseline: the least a Koa server can do for such a read, one primary-key SELECT through a pg pool. */
function bareApp(pool: Pool): Koa {
  const app = new Koa();
  const router = new Router();
  // The fair baseline of a page: the same rows GET revisions reads, as they come from pg, no view, no auth.
  router.get('/bare-page/:id', async (ctx) => {
    const { rows } = await pool.query(
      `SELECT ${REVISION_COLUMNS.join(', ')} FROM revisions WHERE deployment_id = $1 ORDER BY number DESC LIMIT $2`,
      [ctx.params.id, Number(ctx.query.limit ?? 20)],
    );
    ctx.body = rows;
  });
  router.get('/bare/:id', async (ctx) => {
    const { rows } = await pool.query('SELECT id, name, status, url, latest_revision_id FROM deployments WHERE id = $1', [
      ctx.params.id,
    ]);
    ctx.body = rows[0] ?? null;
  });
  app.use(router.routes());
  return app;
}

/** Adds deployments `from..to` of `tenantId`, each with one DEPLOYED revision; returns nothing (ids read later). */
async function seedDeployments(db: Db, tenantId: string, from: number, to: number, secrets: string): Promise<void> {
  await db.raw(
    `WITH created AS (
       INSERT INTO deployments (id, tenant_id, name, route_key, source, source_config, status, latest_revision_id, url)
       SELECT gen_random_uuid(), :tenantId, 'bench-' || g, 'bench-' || g, 'codehost',
              '{"repo_url": "https://example.com/acme/agent.git"}', 'READY', gen_random_uuid(), 'http://127.0.0.1:8123/bench-' || g
       FROM generate_series(:from::int, :to::int) g
       RETURNING id, latest_revision_id)
     INSERT INTO revisions (id, deployment_id, tenant_id, number, status, source, source_config, source_revision_config,
                            secrets_encrypted)
     SELECT latest_revision_id, id, :tenantId, 1, 'DEPLOYED', 'codehost', '{"repo_url": "https://example.com/acme/agent.git"}',
            '{"repo_ref": "main", "graphx_config_path": "graphx.json"}', :secrets
     FROM created`,
    { tenantId, from, to, secrets },
  );
}

/** Gives each read deployment `count` revisions in all, newest first in mixed statuses (in progress, failed, …). */
async function seedRevisions(db: Db, deploymentIds: string[], count: number, secrets: string): Promise<void> {
  await db.raw(
    `INSERT INTO revisions (id, deployment_id, tenant_id, number, status, status_message, source, source_config,
                            source_revision_config, secrets_encrypted)
     SELECT gen_random_uuid(), d.id, d.tenant_id, g, (:statuses::text[])[1 + g % :statusCount], 'seeded', 'codehost',
            d.source_config, '{"repo_ref": "main", "graphx_config_path": "graphx.json"}', :secrets
     FROM deployments d, generate_series(2, :count::int) g
     WHERE d.id = ANY(:ids::uuid[])`,
    { statuses: STATUSES, statusCount: STATUSES.length, count, secrets, ids: deploymentIds },
  );
}

/**
 * CPU time of this process's main thread, where both servers run (the load generator has its own thread), in µs; null
 * where /proc is missing. Per request it is the cost of a read with less of the noise of a shared machine than req/s.
 */
function mainThreadCpuUs(): number | null {
  try {
    const fields = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return null;
  }
}

type Measured = LoadResult & { cpuUsPerRequest: number };

const figures = (result: Measured) =>
  `${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${result.p50Ms.toFixed(1).padStart(5)} ms  ` +
  `p99 ${result.p99Ms.toFixed(1).padStart(5)} ms  ${result.cpuUsPerRequest.toFixed(0).padStart(4)} µs CPU` +
  `${result.errors ? ` (${result.errors} errors)` : ''}`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The median of each figure over rounds (the machine is shared: one round can land on someone else's build). */
function medianOf(results: Measured[]): Measured {
  return {
    cpuUsPerRequest: median(results.map((result) => result.cpuUsPerRequest)),
    requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
    p50Ms: median(results.map((result) => result.p50Ms)),
    p99Ms: median(results.map((result) => result.p99Ms)),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
  };
}

/** One line: the read, then the bare lookup measured alternately with it (the machine's load drifts) and the ratio. */
const ratio = (result: Measured, bare: Measured) =>
  `${((100 * result.requestsPerSecond) / bare.requestsPerSecond).toFixed(0).padStart(3)}%`;

/** One line: the read, then the bare lookup measured alternately with it (the machine's load drifts) and the ratio. */
const row = (label: string, result: Measured, bare: Measured) =>
  `  ${label.padEnd(21)} ${figures(result)}   | bare ${figures(bare)}   ${ratio(result, bare)}`;

export async function benchControlPlane(): Promise<void> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-bench-controlplane-'));
  const databaseName = `graphx_bench_cp_${Date.now().toString(36)}`;
  const ADMIN_URL = await benchAdminUrl();
  const databaseUrl = ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
  const admin = new PgClient({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${databaseName}"`);
  const config = loadConfig({}, { GRAPHX_DATA_DIR: workDir, DATABASE_URL: databaseUrl, GRAPHX_LOG_LEVEL: 'warn' });
  const db = createDb(databaseUrl);
  const pool = new Pool({ connectionString: databaseUrl, max: 10 });
  // Never connected: the reads measured here make no Temporal call.
  const temporal = new TemporalClient({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  const servers: http.Server[] = [];
  try {
    await migrateToLatest(db);
    const secretBox = new SecretBox(loadSecretKey(config.secretKey, config.dataDir));
    const secrets = secretBox.encrypt(JSON.stringify([{ name: 'OPENAI_API_KEY', value: 'sk-bench' }]));
    const { tenantId, apiKey } = await createTenant(db);
    // The request log stays on, through the output the process logger writes stdout with (buffered, asynchronous), but
    // to /dev/null: the figures are the cost of writing it, not of a terminal scrolling.
    const log = createLogger('/dev/null', 'info');
    const api = await listen(createApp({ config, db, secretBox, temporal, log }).callback());
    const bare = await listen(bareApp(pool).callback());
    servers.push(api, bare);

    const readSet = async () =>
      (await db('deployments')
        .where({ tenant_id: tenantId })
        .orderBy('id')
        .limit(1000)
        .select('id', 'latest_revision_id')) as Array<{
        id: string;
        latest_revision_id: string;
      }>;
    const run = async (
      label: string,
      targets: Array<{ id: string; latest_revision_id: string }>,
      { withOk = false, withOneRowPage = false } = {},
    ) => {
      const load = async (port: number, paths: string[]): Promise<Measured> => {
        const cpuBefore = mainThreadCpuUs();
        const result = await measure({
          port,
          paths,
          headers: { 'X-Api-Key': apiKey },
          connections: CONNECTIONS,
          warmupMs: 500,
          durationMs: SECONDS * 1000,
        });
        const cpuAfter = mainThreadCpuUs();
        // The warm-up's requests are not counted, its CPU is: the figure is a little high, alike for every line.
        const requests = result.requestsPerSecond * SECONDS;
        const cpuUsPerRequest = cpuBefore === null || cpuAfter === null ? NaN : (cpuAfter - cpuBefore) / requests;
        return { ...result, cpuUsPerRequest };
      };
      console.log(`${label} (${CONNECTIONS} keep-alive connections, medians of ${ROUNDS} alternating rounds of ${SECONDS} s):`);
      const barePaths = targets.map((target) => `/bare/${target.id}`);
      // [label, path, rows of its page]: a page is also measured beside a bare read of the same rows (see bareApp).
      type Read = [string, (target: (typeof targets)[number]) => string, number?];
      const reads: Read[] = [
        // /ok reads no row: its line is the cost of the middleware alone, once is enough.
        ...(withOk ? [['GET /ok', () => '/ok'] as Read] : []),
        ['GET deployment', (target) => `/v2/deployments/${target.id}`],
        ['GET revision', (target) => `/v2/deployments/${target.id}/revisions/${target.latest_revision_id}`],
        ['GET revisions', (target) => `/v2/deployments/${target.id}/revisions`, 20],
        // The default page holds 20 revisions where the bare lookup reads one row: a page of one shows the cost of a
        // long history alone (it must match the 1-revision lines above).
        ...(withOneRowPage
          ? [['GET revisions?limit=1', (target) => `/v2/deployments/${target.id}/revisions?limit=1`, 1] as Read]
          : []),
      ];
      for (const [name, pathOf, pageRows] of reads) {
        const ours: Measured[] = [];
        const baseline: Measured[] = [];
        const barePage: Measured[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          baseline.push(await load(portOf(bare), barePaths));
          const pagePaths = targets.map((target) => `/bare-page/${target.id}?limit=${pageRows}`);
          if (pageRows) barePage.push(await load(portOf(bare), pagePaths));
          ours.push(await load(portOf(api), targets.map(pathOf)));
        }
        console.log(row(name, medianOf(ours), medianOf(baseline)));
        if (pageRows) {
          const page = medianOf(barePage);
          console.log(
            `    a bare read of the same page (limit ${pageRows}): ${figures(page)}   ${ratio(medianOf(ours), page)} of it`,
          );
        }
      }
    };

    await seedDeployments(db, tenantId, 1, READ_DEPLOYMENTS, secrets);
    await run(`${READ_DEPLOYMENTS} deployments, 1 revision each`, await readSet(), { withOk: true });
    await seedDeployments(db, tenantId, READ_DEPLOYMENTS + 1, 10_000, secrets);
    await db.raw('ANALYZE');
    const spread = await readSet();
    await run('10,000 deployments, 1 revision each', spread);
    const longHistories = spread.slice(0, 100);
    await seedRevisions(
      db,
      longHistories.map((target) => target.id),
      500,
      secrets,
    );
    await db.raw('ANALYZE');
    await run('10,000 deployments, reads on 100 with 500 revisions each', longHistories, { withOneRowPage: true });
    console.log(`targets: ≥ 70% of bare req/s and p99 < 25 ms for each read, flat across the three lines`);
  } finally {
    for (const server of servers) server.close();
    await pool.end();
    await db.destroy();
    await temporal.connection.close().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}
