/**
 * A thread left busy by a runtime process that died mid-run (SIGKILL) is taken over by another instance once the
 * dead process's lease expires; until then it stays protected (in each graph language). Lease shortened to 5 s for
 * the test.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { devAppsForSuite, fixtureIn, graphLanguages, type GraphLanguage, type RuntimeProcess } from './support/runtimeHarness';

// Long enough that the refusal below comes while the lease lives on a busy CI machine (2 s once ran out between the
// kill and the refusal), short enough for the takeover to be quick.
const LEASE_MS = 5_000;
const LEASE = { GRAPHX_RUNTIME_LEASE_MS: String(LEASE_MS) };

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const apps = devAppsForSuite('lease', fixtureIn('runtime-echo', language), { count: 2, env: LEASE });
  let database: { url: string };
  let doomed: RuntimeProcess;
  let survivor: RuntimeProcess;

  beforeAll(() => {
    database = apps.database;
    [doomed, survivor] = apps.runtimes as [RuntimeProcess, RuntimeProcess];
  });

  test('a thread whose runtime was SIGKILLed mid-run is refused while the lease lives, then taken over by another instance', async () => {
    const onDoomed = new Client({ apiUrl: doomed.url, apiKey: null });
    const onSurvivor = new Client({ apiUrl: survivor.url, apiKey: null });
    const thread = await onDoomed.threads.create();
    const stream = onDoomed.runs.stream(thread.thread_id, 'slow', { input: { messages: [] }, streamMode: 'updates' });
    const iterator = stream[Symbol.asyncIterator]();
    const crashedRunId = ((await iterator.next()).value as { data: { run_id: string } }).data.run_id;
    doomed.child.kill('SIGKILL');
    await new Promise((resolve) => doomed.child.once('exit', resolve));
    await iterator.next().catch(() => undefined);

    const refused = await fetch(`${survivor.url}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: { messages: [] }, multitask_strategy: 'reject' }),
    });
    expect(refused.status).toBe(409);

    const started = Date.now();
    const events = [];
    for await (const event of onSurvivor.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'after' }] },
      streamMode: 'updates',
      multitaskStrategy: 'enqueue',
    })) {
      events.push(event.event);
    }
    expect(events).toEqual(['metadata', 'updates', 'updates']);
    // Taken over when the lease ran out, not after the enqueue limit.
    expect(Date.now() - started).toBeLessThan(LEASE_MS + 10_000);
    expect((await onSurvivor.threads.get(thread.thread_id)).status).toBe('idle');
    const runs = await onSurvivor.runs.list(thread.thread_id);
    expect(runs.map((run) => [run.run_id === crashedRunId, run.status])).toEqual([
      [false, 'success'],
      [true, 'error'],
    ]);
    const pg = new PgClient({ connectionString: database.url });
    await pg.connect();
    try {
      const row = (
        await pg.query('SELECT busy_owner, lease_expires_at FROM graphx_threads WHERE thread_id = $1', [thread.thread_id])
      ).rows[0];
      expect(row).toEqual({ busy_owner: null, lease_expires_at: null });
    } finally {
      await pg.end();
    }
  });
});
