/**
 * Background runs over two instances sharing one database (in each graph language): a run whose instance is SIGKILLed
 * mid-run is resumed by the other from its last checkpoint and completes once; under a burst of runs each executes
 * exactly once; a stop asked while the run's instance was frozen holds when an instance started later takes the run over.
 * Lease shortened to 2 s for the test.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { waitFor } from '@graphx/kit/net/ports';
import {
  devAppsForSuite,
  fixtureIn,
  graphLanguages,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';

const LEASE = { GRAPHX_RUNTIME_LEASE_MS: '2000' };
const say = (content: string) => ({ messages: [{ role: 'user', content }] });
const texts = (values: any) => (values.messages as Array<{ content: string }>).map((message) => message.content);

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let pg: PgClient;
  // Declared before the apps' hooks (jest runs afterAll hooks in order): the client ends before the database is dropped.
  afterAll(async () => {
    await pg?.end();
  });
  const apps = devAppsForSuite('failover', fixtureIn('runtime-echo', language), { count: 2, env: LEASE });
  let instances: RuntimeProcess[];

  beforeAll(async () => {
    instances = apps.runtimes;
    pg = new PgClient({ connectionString: apps.database.url });
    await pg.connect();
  });

  /** The instance that took `runId` from the queue (its owner names the process), once one has. */
  async function executorOf(runId: string, among: RuntimeProcess[]): Promise<RuntimeProcess> {
    let owner = '';
    await waitFor(
      'the run to be taken',
      async () => {
        const row = await pg.query('SELECT owner FROM graphx_runs WHERE run_id = $1 AND status = $2', [runId, 'running']);
        owner = row.rows[0]?.owner ?? '';
        return owner !== '';
      },
      10_000,
      50,
    );
    return among.find((instance) => owner.includes(`:${instance.child.pid}:`))!;
  }

  test('under a burst of background runs on two instances, every run executes exactly once', async () => {
    const client = new Client({ apiUrl: instances[0]!.url, apiKey: null });
    const threads = await Promise.all(Array.from({ length: 20 }, () => client.threads.create()));
    const runs = await Promise.all(
      threads.map((thread, index) => client.runs.create(thread.thread_id, 'agent', { input: say(`n${index}`) })),
    );
    const results = await Promise.all(runs.map((run) => client.runs.join(run.thread_id!, run.run_id)));
    results.forEach((values, index) => expect(texts(values)).toEqual([`n${index}`, `echo: n${index}`, 'ok']));
    const rows = await pg.query('SELECT attempt, status, owner FROM graphx_runs WHERE run_id = ANY($1::uuid[])', [
      runs.map((run) => run.run_id),
    ]);
    expect(rows.rows.map((row) => [row.attempt, row.status])).toEqual(runs.map(() => [1, 'success']));
  });

  test('a background run whose instance is SIGKILLed mid-run is resumed by the other instance and completes once', async () => {
    const client = new Client({ apiUrl: instances[0]!.url, apiKey: null });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'slow', { input: say('survive') });
    const doomed = await executorOf(run.run_id, instances);
    const survivor = instances.find((instance) => instance !== doomed)!;
    doomed.child.kill('SIGKILL');
    await new Promise((resolve) => doomed.child.once('exit', resolve));

    const onSurvivor = new Client({ apiUrl: survivor.url, apiKey: null });
    const values = await onSurvivor.runs.join(thread.thread_id, run.run_id);
    expect(texts(values)).toEqual(['survive', 'done']);
    const row = await pg.query('SELECT attempt, status, owner FROM graphx_runs WHERE run_id = $1', [run.run_id]);
    expect(row.rows[0]).toMatchObject({ attempt: 2, status: 'success' });
    expect(row.rows[0].owner).toContain(`:${survivor.child.pid}:`);
  });

  // Last: it ends both of the suite's instances.
  test("a stop asked while the run's instance was frozen is honoured by an instance started later that takes the run over", async () => {
    // Two live instances (the test before ended one).
    const live = instances.filter((instance) => instance.child.exitCode === null && instance.child.signalCode === null);
    while (live.length < 2) {
      const started = await startDevRuntime(fixtureIn('runtime-echo', language), apps.database.url, LEASE);
      apps.runtimes.push(started);
      live.push(started);
    }
    const client = new Client({ apiUrl: live[0]!.url, apiKey: null });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'slow', { input: say('stop me') });
    const frozen = await executorOf(run.run_id, live);
    const other = live.find((instance) => instance !== frozen)!;
    frozen.child.kill('SIGSTOP');
    await new Client({ apiUrl: other.url, apiKey: null }).runs.cancel(thread.thread_id, run.run_id, false, 'interrupt');
    // Neither instance acts on it: the run's owner never wakes, and the other one (which heard the cancel
    // notification) goes too. An instance started afterwards heard nothing: only what the database holds tells it.
    for (const instance of [frozen, other]) {
      const exited = new Promise((resolve) => instance.child.once('exit', resolve));
      instance.child.kill('SIGKILL');
      await exited;
    }
    const later = await startDevRuntime(fixtureIn('runtime-echo', language), apps.database.url, LEASE);
    apps.runtimes.push(later);
    await new Client({ apiUrl: later.url, apiKey: null }).runs.join(thread.thread_id, run.run_id);
    const row = await pg.query('SELECT attempt, status, owner FROM graphx_runs WHERE run_id = $1', [run.run_id]);
    expect(row.rows[0]).toMatchObject({ attempt: 2, status: 'interrupted' });
    expect(row.rows[0].owner).toContain(`:${later.child.pid}:`);
  });
});
