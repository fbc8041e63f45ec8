/**
 * Crons through the official JS client (`client.crons.*`) against two `graphx dev` instances over one database:
 * create (stateless and on a thread), search, count, update, delete, time zones, `enabled`, `end_time`, bad input;
 * and a per-second schedule fired through the background queue once per tick across both instances.
 * The cron poll is shortened to 100 ms for the test.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import { devAppsForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const POLL = { GRAPHX_RUNTIME_CRON_POLL_MS: '100' };
  const say = (content: string) => ({ messages: [{ role: 'user', content }] });
  const apps = devAppsForSuite('crons', fixtureIn('runtime-echo', language), { count: 2, env: POLL });
  let client: Client;

  beforeAll(() => {
    client = apps.clients[0] as Client;
  });

  const post = async (path: string, body: unknown, method = 'POST') => {
    const response = await fetch(`${apps.runtimes[1]!.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: () => response.json() as Promise<any> };
  };

  test('crons are created, found, counted, updated and deleted through client.crons from either instance, and go with their thread', async () => {
    const thread = await client.threads.create();
    const stateless = await client.crons.create('agent', {
      schedule: '0 0 1 1 *',
      input: say('new year'),
      metadata: { team: 'a' },
    });
    const onThread = await client.crons.createForThread(thread.thread_id, 'agent', {
      schedule: '30 12 * * *',
      input: say('noon'),
    });
    expect(stateless).toMatchObject({ schedule: '0 0 1 1 *', thread_id: null, enabled: true, metadata: { team: 'a' } });
    expect(stateless.payload).toMatchObject({ input: say('new year') });
    expect(new Date(stateless.next_run_date!).toISOString()).toMatch(/-01-01T00:00:00\.000Z$/);
    expect(onThread).toMatchObject({ thread_id: thread.thread_id, schedule: '30 12 * * *' });

    const other = new Client({ apiUrl: apps.runtimes[1]!.url, apiKey: null });
    expect((await other.crons.search({ threadId: thread.thread_id })).map((cron) => cron.cron_id)).toEqual([onThread.cron_id]);
    expect(await other.crons.count({ assistantId: 'agent' })).toBeGreaterThanOrEqual(2);
    expect(await other.crons.count({ threadId: thread.thread_id })).toBe(1);
    const partial = await other.crons.search({ threadId: thread.thread_id, select: ['cron_id', 'schedule'] });
    expect(partial).toEqual([{ cron_id: onThread.cron_id, schedule: '30 12 * * *' }]);

    const updated = await other.crons.update(onThread.cron_id, { schedule: '0 6 * * *', enabled: false, input: say('six') });
    expect(updated).toMatchObject({ schedule: '0 6 * * *', enabled: false, payload: { input: say('six') } });
    expect(new Date(updated.next_run_date!).getUTCHours()).toBe(6);
    expect((await other.crons.search({ enabled: false })).map((cron) => cron.cron_id)).toEqual([onThread.cron_id]);

    await client.crons.delete(stateless.cron_id);
    await expect(client.crons.delete(stateless.cron_id)).rejects.toThrow(/404/);
    expect((await client.crons.search()).map((cron) => cron.cron_id)).not.toContain(stateless.cron_id);
    await client.threads.delete(thread.thread_id);
    expect(await client.crons.count({ threadId: thread.thread_id })).toBe(0);
  });

  test('a cron schedule counts in its time zone; an end_time in the past leaves no next run', async () => {
    const response = await post('/runs/crons', { assistant_id: 'agent', schedule: '0 9 * * *', timezone: 'America/New_York' });
    expect(response.status).toBe(200);
    const cron = await response.json();
    expect(cron.timezone).toBe('America/New_York');
    const localHour = new Date(cron.next_run_date).toLocaleString('en-US', {
      timeZone: 'America/New_York',
      hour: '2-digit',
      hour12: false,
    });
    expect(localHour).toBe('09');
    const ended = await (
      await post('/runs/crons', { assistant_id: 'agent', schedule: '* * * * *', end_time: '2020-01-01T00:00:00Z' })
    ).json();
    expect(ended.next_run_date).toBeNull();
    await client.crons.delete(cron.cron_id);
    await client.crons.delete(ended.cron_id);
  });

  test('a bad schedule, time zone, assistant, thread or cron id is answered with a clear 4xx and detail', async () => {
    const cases: Array<[string, unknown, number, RegExp, string?]> = [
      ['/runs/crons', { assistant_id: 'agent', schedule: 'every minute' }, 422, /schedule/],
      ['/runs/crons', { assistant_id: 'agent', schedule: '* * * * *', timezone: 'Mars/Olympus' }, 422, /timezone/],
      ['/runs/crons', { assistant_id: 'agent' }, 422, /schedule/],
      ['/runs/crons', { assistant_id: 'nope', schedule: '* * * * *' }, 404, /nope/],
      [`/threads/${crypto.randomUUID()}/runs/crons`, { assistant_id: 'agent', schedule: '* * * * *' }, 404, /Thread/],
      ['/runs/crons/not-a-uuid', { enabled: false }, 422, /cronId/, 'PATCH'],
      [`/runs/crons/${crypto.randomUUID()}`, { enabled: false }, 404, /Cron/, 'PATCH'],
      ['/runs/crons/search', { limit: 0 }, 422, /limit/],
    ];
    for (const [path, body, status, detail, method] of cases) {
      const response = await post(path, body, method);
      expect([path, response.status]).toEqual([path, status]);
      expect(JSON.stringify((await response.json()).detail)).toMatch(detail);
    }
  });

  test('a per-second cron on two instances fires once per tick through the background queue, and not while disabled', async () => {
    const thread = await client.threads.create();
    const started = Date.now();
    const onThread = await client.crons.createForThread(thread.thread_id, 'agent', {
      schedule: '* * * * * *',
      input: say('tick'),
    });
    const stateless = await client.crons.create('agent', { schedule: '* * * * * *', input: say('tock') });
    const disabled = await client.crons.create('agent', { schedule: '* * * * * *', input: say('never'), enabled: false });
    await new Promise((resolve) => setTimeout(resolve, 4500));
    await client.crons.update(onThread.cron_id, { enabled: false });
    await client.crons.update(stateless.cron_id, { enabled: false });
    const seconds = (Date.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const runsOf = async (cronId: string) => {
      const pg = new PgClient({ connectionString: apps.database.url });
      await pg.connect();
      try {
        return (await pg.query(`SELECT run_id, owner, status FROM graphx_runs WHERE metadata->>'cron_id' = $1`, [cronId])).rows;
      } finally {
        await pg.end();
      }
    };
    for (const cron of [onThread, stateless]) {
      const runs = await runsOf(cron.cron_id);
      expect(runs.length).toBeGreaterThanOrEqual(Math.floor(seconds) - 1);
      expect(runs.length).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    }
    expect(await runsOf(disabled.cron_id)).toEqual([]);
    const threadRuns = await client.runs.list(thread.thread_id, { limit: 100 });
    expect(threadRuns.length).toBe((await runsOf(onThread.cron_id)).length);
    const values = await client.runs.join(thread.thread_id, threadRuns[0]!.run_id);
    expect((values as any).messages.at(-3).content).toBe('tick');
  });
});
