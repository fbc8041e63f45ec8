/**
 * Pipeline benchmark: a small LangGraph.js repository (test/fixtures/apps/pipeline-echo) deployed again and again
 * through the whole stack (API, outbox, Temporal dev server, worker, git, npm with a warm cache, PostgreSQL, runtime,
 * gateway). Prints the median create→DEPLOYED time and the orchestration overhead: the pipeline's wall time minus the
 * time spent inside its activities, read from each revision workflow's history. Targets: ≤ 10 s and ≤ 300 ms.
 * Prints figures; asserts nothing.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/knex';
import { createTenant } from './support';
import { findFreePort } from '../src/net/ports';
import { startStack } from '../src/stack';
import { dropDeploymentDatabase } from '../src/pipeline/deploymentDatabase';
import { startTemporalDevServer } from '../src/temporal/devServer';
import { revisionWorkflowId } from '../workflows/messages';

const ROOT = path.resolve(__dirname, '..');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'apps', 'pipeline-echo');
const RUNS = Number(process.env.BENCH_PIPELINE_RUNS ?? 5);
const ADMIN_URL = process.env.GRAPHX_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const ms = (value: number) => `${Math.round(value)} ms`;

function fixtureRepo(dir: string): string {
  fs.cpSync(FIXTURE, dir, { recursive: true, filter: (source) => !source.includes('node_modules') });
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
  git('commit', '-q', '-m', 'bench app');
  return `file://${dir}`;
}

export async function benchPipeline(): Promise<void> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-bench-pipeline-'));
  const databaseName = `graphx_bench_${Date.now().toString(36)}`;
  const admin = new PgClient({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${databaseName}"`);
  const temporal = await startTemporalDevServer({ dbFile: null, port: await findFreePort(), uiPort: null, namespace: 'default' });
  const config = loadConfig(
    {},
    {
      PORT: '0',
      GRAPHX_GATEWAY_PORT: '0',
      GRAPHX_DATA_DIR: path.join(workDir, 'data'),
      DATABASE_URL: ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`),
      TEMPORAL_ADDRESS: temporal.address,
      GRAPHX_ALLOW_FILE_REPOS: '1',
      GRAPHX_LOG_LEVEL: 'warn',
    },
  );
  const stack = await startStack(config);
  try {
    const { apiKey } = await createTenant(stack.db);
    const repoUrl = fixtureRepo(path.join(workDir, 'repo'));
    const api = async (method: string, urlPath: string, body?: unknown) => {
      const response = await fetch(`${stack.apiUrl}${urlPath}`, {
        method,
        headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await response.json()) as Record<string, any>;
    };

    const deployOnce = async (label: string) => {
      const started = Date.now();
      const created = await api('POST', '/v2/deployments', {
        name: `bench-${label}-${crypto.randomBytes(3).toString('hex')}`,
        source: 'codehost',
        source_config: { repo_url: repoUrl },
        source_revision_config: { repo_ref: 'main' },
        secrets: [],
      });
      const revisionId = created.latest_revision_id as string;
      for (;;) {
        const revision = await api('GET', `/v2/deployments/${created.id}/revisions/${revisionId}`);
        if (revision.status === 'DEPLOYED') break;
        if (String(revision.status).endsWith('_FAILED')) throw new Error(`${revision.status}: ${revision.status_message}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const observed = Date.now() - started;
      const { wallMs, activityMs, perActivity } = await pipelineTimes(revisionId, started);
      return { observed, wallMs, overhead: wallMs - activityMs, perActivity };
    };

    console.log(`warm-up deployment (fills the npm cache)…`);
    await deployOnce('warmup');
    const results = [];
    for (let run = 1; run <= RUNS; run += 1) {
      const result = await deployOnce(String(run));
      results.push(result);
      console.log(
        `  run ${run}: create→DEPLOYED ${ms(result.observed)}, pipeline ${ms(result.wallMs)}, orchestration ${ms(result.overhead)}`,
      );
    }
    const activityNames = [...new Set(results.flatMap((result) => Object.keys(result.perActivity)))];
    console.log(`pipeline (${RUNS} runs, median):`);
    console.log(`  create→DEPLOYED          ${ms(median(results.map((result) => result.observed)))}   (target ≤ 10000 ms)`);
    console.log(`  orchestration overhead   ${ms(median(results.map((result) => result.overhead)))}   (target ≤ 300 ms)`);
    for (const name of activityNames) {
      console.log(`    inside ${name.padEnd(18)} ${ms(median(results.map((result) => result.perActivity[name] ?? 0)))}`);
    }
  } finally {
    // The benchmark's deployments each got a database and a role on the machine's PostgreSQL: none may outlive it.
    const deploymentIds: string[] = await stack.db('deployments').pluck('id');
    await stack.stop();
    await temporal.stop();
    const adminDb = createDb(ADMIN_URL, 1);
    for (const deploymentId of deploymentIds) await dropDeploymentDatabase(adminDb, deploymentId);
    await adminDb.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
    fs.rmSync(workDir, { recursive: true, force: true });
  }

  /** Wall time from the create request to the revision workflow's close, and the time inside its activities. */
  async function pipelineTimes(revisionId: string, startedAt: number) {
    const handle = stack.temporal.workflow.getHandle(revisionWorkflowId(revisionId));
    await handle.result();
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const time = (event: (typeof events)[number]) => {
      const { seconds, nanos } = event.eventTime as { seconds: { toNumber?: () => number } | number; nanos: number };
      const secs = typeof seconds === 'number' ? seconds : (seconds.toNumber?.() ?? Number(seconds));
      return secs * 1000 + nanos / 1e6;
    };
    const scheduled = new Map<string, string>();
    const started = new Map<string, number>();
    const perActivity: Record<string, number> = {};
    let activityMs = 0;
    let closedAt = startedAt;
    for (const event of events) {
      const id = String(event.eventId);
      if (event.activityTaskScheduledEventAttributes)
        scheduled.set(id, event.activityTaskScheduledEventAttributes.activityType?.name ?? '?');
      if (event.activityTaskStartedEventAttributes)
        started.set(String(event.activityTaskStartedEventAttributes.scheduledEventId), time(event));
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed) {
        const key = String(completed.scheduledEventId);
        const spent = time(event) - (started.get(key) ?? time(event));
        const name = scheduled.get(key) ?? '?';
        perActivity[name] = (perActivity[name] ?? 0) + spent;
        activityMs += spent;
      }
      if (event.workflowExecutionCompletedEventAttributes) closedAt = time(event);
    }
    return { wallMs: closedAt - startedAt, activityMs, perActivity };
  }
}
