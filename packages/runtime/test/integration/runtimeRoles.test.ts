/**
 * The agent server split in two over one database (GRAPHX_RUNTIME_ROLE, issue 21: the queue side as its own
 * Deployment), in each graph language: an `api` instance answers HTTP and executes only the streamed runs it answers;
 * every background run it accepts is executed by a `queue` instance.
 */
import { Client } from '@langchain/langgraph-sdk';
import { Client as PgClient } from 'pg';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';

const say = (content: string) => ({ messages: [{ role: 'user', content }] });
const texts = (values: any) => (values.messages as Array<{ content: string }>).map((message) => message.content);

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: RuntimeProcess;
  let queue: RuntimeProcess;
  let pg: PgClient;

  beforeAll(async () => {
    database = await createTestDatabase('roles');
    const app = fixtureIn('runtime-echo', language);
    [api, queue] = await Promise.all([
      startDevRuntime(app, database.url, { GRAPHX_RUNTIME_ROLE: 'api', GRAPHX_RUNTIME_LEASE_MS: '2000' }),
      startDevRuntime(app, database.url, { GRAPHX_RUNTIME_ROLE: 'queue', GRAPHX_RUNTIME_LEASE_MS: '2000' }),
    ]);
    pg = new PgClient({ connectionString: database.url });
    await pg.connect();
  }, RUNTIME_START_MS + 30_000);

  afterAll(async () => {
    await pg?.end();
    for (const instance of [api, queue]) {
      if (instance && instance.child.exitCode === null && instance.child.signalCode === null) await instance.stop();
    }
    await database?.drop();
  });

  test('background runs accepted by the api side are all executed by the queue side', async () => {
    const client = new Client({ apiUrl: api.url, apiKey: null });
    const threads = await Promise.all(Array.from({ length: 6 }, () => client.threads.create()));
    const runs = await Promise.all(
      threads.map((thread, index) => client.runs.create(thread.thread_id, 'agent', { input: say(`q${index}`) })),
    );
    const results = await Promise.all(runs.map((run) => client.runs.join(run.thread_id!, run.run_id)));
    results.forEach((values, index) => expect(texts(values)).toEqual([`q${index}`, `echo: q${index}`, 'ok']));
    const rows = await pg.query('SELECT status, owner FROM graphx_runs WHERE run_id = ANY($1::uuid[])', [
      runs.map((run) => run.run_id),
    ]);
    expect(rows.rows.map((row) => row.status)).toEqual(runs.map(() => 'success'));
    for (const row of rows.rows) expect(row.owner).toContain(`:${queue.child.pid}:`);
  });

  test('a streamed run on the api side is executed there, while the queue side takes none of it', async () => {
    const client = new Client({ apiUrl: api.url, apiKey: null });
    const thread = await client.threads.create();
    const chunks = [];
    for await (const chunk of client.runs.stream(thread.thread_id, 'agent', { input: say('live'), streamMode: 'values' })) {
      chunks.push(chunk);
    }
    const last = chunks.filter((chunk) => chunk.event === 'values').pop();
    expect(texts(last?.data)).toEqual(['live', 'echo: live', 'ok']);
    const rows = await pg.query('SELECT owner FROM graphx_runs WHERE thread_id = $1', [thread.thread_id]);
    for (const row of rows.rows) expect(String(row.owner ?? '')).not.toContain(`:${queue.child.pid}:`);
  });
});
