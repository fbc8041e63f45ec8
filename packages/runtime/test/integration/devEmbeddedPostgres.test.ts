/**
 * `graphx dev --config <graphx.json>` without DATABASE_URI: an embedded PostgreSQL under `<app dir>/.graphx/` serves
 * the runs, and SIGINT stops it with the runtime, leaving no postgres process behind. The app is a copy of the echo
 * fixture under .test-data, so its `.graphx/` never lands in the fixtures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { findFreePort } from '@graphx/kit/net/ports';
import { fixtureConfig, projectRoot, spawnRuntime, type RuntimeProcess } from './support/runtimeHarness';

const appDir = path.join(projectRoot, '.test-data', `dev-embedded-${process.pid}`);
let runtime: RuntimeProcess | null = null;

/** Pids of live processes whose command line names `dir` (the embedded postgres and its children). */
function processesUsing(dir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

beforeAll(() => {
  fs.cpSync(path.dirname(fixtureConfig('runtime-echo')), appDir, { recursive: true });
});

afterAll(() => {
  if (runtime?.child.exitCode === null) runtime.child.kill('SIGKILL');
  for (const pid of processesUsing(appDir)) process.kill(pid, 'SIGKILL');
  fs.rmSync(appDir, { recursive: true, force: true });
});

test('graphx dev without DATABASE_URI serves a run on embedded PostgreSQL and SIGINT leaves no postgres running', async () => {
  const port = await findFreePort();
  runtime = await spawnRuntime({
    args: ['dev', '--config', path.join(appDir, 'graphx.json'), '--port', String(port)],
    env: {},
    port,
  });
  expect(processesUsing(path.join(appDir, '.graphx')).length).toBeGreaterThan(0);

  const client = new Client({ apiUrl: runtime.url, apiKey: null });
  const thread = await client.threads.create();
  const events = [];
  for await (const event of client.runs.stream(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'hi' }] },
    streamMode: 'updates',
  })) {
    events.push(event.event);
  }
  expect(events).toEqual(['metadata', 'updates', 'updates']);
  expect(fs.existsSync(path.join(appDir, '.graphx', 'pg', 'PG_VERSION'))).toBe(true);

  const exited = new Promise<number | null>((resolve) => runtime!.child.once('exit', resolve));
  runtime.child.kill('SIGINT');
  const code = await exited;
  // The runtime's own log says why a stop was not clean.
  expect({ code, output: code === 0 ? '' : runtime.output() }).toEqual({ code: 0, output: '' });
  expect(processesUsing(path.join(appDir, '.graphx'))).toEqual([]);
}, 180_000);
