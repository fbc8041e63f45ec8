/**
 * The upstream JS agent server's own API suite (langgraphjs `libs/langgraph-api/tests`, vendored in ./vendor with the
 * changes its README lists), run unchanged through the official SDK against `graphx dev` serving the suite's graphs,
 * on a fresh database each. The suite's test-only `/internal/truncate` route is served here, by the harness, not by
 * the server under test. Every upstream test must pass, except those in NOT_API (with the reason).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { createTestDatabase, projectRoot, spawnRuntime, type RuntimeProcess } from '../integration/support/runtimeHarness';

const VENDOR = path.join(__dirname, 'vendor');

/** Upstream tests that do not describe the API (full title → why they are not run against us). */
const NOT_API: Record<string, string> = {};

interface VitestAssertion {
  ancestorTitles: string[];
  title: string;
  status: 'passed' | 'failed' | 'skipped' | 'pending' | 'todo';
  failureMessages: string[];
}

/** `/internal/truncate` of the anchor's dev server, as SQL on the runtime's database (system assistants stay). */
async function startTruncateServer(databaseUrl: string): Promise<{ url: string; close: () => Promise<void> }> {
  const statements: Record<string, string[]> = {
    runs: ['DELETE FROM graphx_run_events', 'DELETE FROM graphx_runs'],
    threads: [
      'DELETE FROM graphx_run_events',
      'DELETE FROM graphx_runs',
      'DELETE FROM graphx_crons',
      'DELETE FROM graphx_threads',
    ],
    assistants: [
      `DELETE FROM graphx_assistant_versions WHERE assistant_id IN
         (SELECT assistant_id FROM graphx_assistants WHERE metadata->>'created_by' IS DISTINCT FROM 'system')`,
      `DELETE FROM graphx_assistants WHERE metadata->>'created_by' IS DISTINCT FROM 'system'`,
    ],
    checkpoint: ['DELETE FROM checkpoint_writes', 'DELETE FROM checkpoint_blobs', 'DELETE FROM checkpoints'],
    store: ['DELETE FROM store'],
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', async () => {
      const flags = JSON.parse(raw || '{}') as Record<string, boolean>;
      const client = new PgClient({ connectionString: databaseUrl });
      try {
        await client.connect();
        for (const [flag, sqls] of Object.entries(statements)) {
          if (flags[flag]) for (const sql of sqls) await client.query(sql);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: String(error) }));
      } finally {
        await client.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/internal/truncate`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs one vendored vitest file against `apiUrl`; resolves with every test's outcome. */
async function runVitest(file: string, env: Record<string, string>): Promise<{ results: VitestAssertion[]; log: string }> {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-upstream-')), 'report.json');
  // Node 20 has the WebSocket global behind a flag (the protocol-transport test needs it; Node 22 has it on).
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...env,
    NODE_OPTIONS: [process.env.NODE_OPTIONS, typeof WebSocket === 'undefined' ? '--experimental-websocket' : '']
      .filter(Boolean)
      .join(' '),
  };
  // The suite spawns the anchor's own server when CI is set.
  delete childEnv.CI;
  delete childEnv.UPSTREAM_SPAWN_PEER;
  const vitest = path.join(projectRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const child = spawn(
    process.execPath,
    [
      vitest,
      'run',
      '--config',
      'vitest.config.mjs',
      file,
      '--reporter=json',
      `--outputFile=${report}`,
      // While working on one upstream test: UPSTREAM_TEST_NAME=<pattern> npx jest test/upstream
      ...(process.env.UPSTREAM_TEST_NAME ? ['-t', process.env.UPSTREAM_TEST_NAME] : []),
    ],
    { cwd: VENDOR, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  if (!fs.existsSync(report)) throw new Error(`vitest wrote no report:\n${log.slice(-4000)}`);
  const parsed = JSON.parse(fs.readFileSync(report, 'utf8')) as { testResults: { assertionResults: VitestAssertion[] }[] };
  return { results: parsed.testResults.flatMap((file) => file.assertionResults), log };
}

/**
 * The first schema read of a graph type-checks its source (seconds, once per graph and process); some upstream tests
 * give a schema request 10 s, which a loaded machine can spend on that alone. Each graph's schemas are read once
 * before the suite starts, so the suite measures answers, not the first compile.
 */
async function warmSchemas(url: string, configFile: string): Promise<void> {
  const { graphs, auth } = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { graphs: Record<string, unknown>; auth?: unknown };
  if (auth) return; // the auth suite's graphs need a token; none of its tests reads schemas
  for (const graphId of Object.keys(graphs)) {
    await fetch(`${url}/assistants/${encodeURIComponent(graphId)}/subgraphs?recurse=true`).then((answer) => answer.text());
    await fetch(`${url}/assistants/${encodeURIComponent(graphId)}/schemas`).then((answer) => answer.text());
  }
}

const fullTitle = (test: VitestAssertion) => [...test.ancestorTitles, test.title].join(' > ');

async function expectUpstreamFilePasses(file: string, config: string, atLeast = 20): Promise<void> {
  const database = await createTestDatabase('upstream');
  const truncate = await startTruncateServer(database.url);
  let runtime: RuntimeProcess | null = null;
  try {
    const port = await findFreePort();
    runtime = await spawnRuntime({
      args: ['dev', '--config', path.join(VENDOR, 'graphs', config), '--port', String(port)],
      env: { DATABASE_URI: database.url },
      port,
    });
    await warmSchemas(`http://127.0.0.1:${port}`, path.join(VENDOR, 'graphs', config));
    const { results } = await runVitest(file, {
      UPSTREAM_API_URL: `http://localhost:${port}`,
      UPSTREAM_TRUNCATE_URL: truncate.url,
    });
    const ran = results.filter((test) => test.status === 'passed' || test.status === 'failed');
    const failures = ran
      .filter((test) => test.status === 'failed' && !(fullTitle(test) in NOT_API))
      .map((test) => `${fullTitle(test)}\n    ${(test.failureMessages[0] ?? '').split('\n').slice(0, 3).join('\n    ')}`);
    expect(ran.length).toBeGreaterThanOrEqual(process.env.UPSTREAM_TEST_NAME ? 1 : atLeast);
    expect(failures).toEqual([]);
  } finally {
    await runtime?.stop();
    await truncate.close();
    await database.drop();
  }
}

describe('the upstream JS agent server suite against graphx dev', () => {
  it('api.test.mts: assistants, threads, runs, store, subgraphs, errors, multitasking, custom routes, UI', async () => {
    await expectUpstreamFilePasses('api.test.mts', 'langgraph.json');
  }, 600_000);

  it('protocol-transport.test.mts: protocol v2 over a WebSocket (subscribe by namespace, run.start, agent.getTree)', async () => {
    await expectUpstreamFilePasses('protocol-transport.test.mts', 'langgraph.json', 1);
  }, 120_000);

  it('auth.test.mts: custom auth on every resource', async () => {
    await expectUpstreamFilePasses('auth.test.mts', 'langgraph.auth.json');
  }, 300_000);
});
