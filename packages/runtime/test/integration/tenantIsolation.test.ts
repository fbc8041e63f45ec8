/**
 * Two end users of one deployed app (the custom-auth fixture: `user1-token`, `user2-token`; its handlers scope
 * threads, crons and store items to their owner). user2 tries every route and every body field that can name user1's
 * thread, run, cron or store item: each attempt is refused (404 or 403 with a `detail`; a body naming another thread
 * is a 422), and user1's data is checked unchanged from user1's side. The nine reproductions of issue 25 come first.
 * Assistants named by run bodies: assistantsAuth.test.ts.
 */
import crypto from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import WebSocket from 'ws';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let user1: Client;
let user2: Client;

const SECRET = 'user1-secret-7f3a';
const said = (content: string) => ({ messages: [{ role: 'user', content }] });

/** user1's resources, made once. */
let t1: string;
let t1Run: string;
let t1Checkpoint: string;
let t2: string;
let cronOfT1: string;

interface Answer {
  status: number;
  text: string;
  json: any;
}

async function as(token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // an event stream
  }
  return { status: response.status, text, json };
}
const asUser2 = (method: string, path: string, body?: unknown) => as('user2-token', method, path, body);

/** A refusal as the issue asks: the status given, a JSON `detail`, and nothing of user1's in the answer. */
function expectRefused(answer: Answer, status: number): void {
  expect({ status: answer.status, hasDetail: typeof answer.json?.detail }).toEqual({ status, hasDetail: expect.any(String) });
  expect(answer.text).not.toContain(SECRET);
}

/** What user1 sees of T1: its state, its history, its runs (each refused attempt must leave all three as they were). */
async function t1AsUser1() {
  const [state, history, runs] = await Promise.all([
    user1.threads.getState(t1),
    user1.threads.getHistory(t1, { limit: 100 }),
    user1.runs.list(t1, { limit: 100 }),
  ]);
  return {
    values: state.values,
    checkpoint: state.checkpoint.checkpoint_id,
    history: history.map((item) => item.checkpoint.checkpoint_id),
    runs: runs.map((run) => [run.run_id, run.status]),
  };
}

/** Waits for a stateless background run of user1 and returns what its join stream shows user1. */
async function joinedAsUser1(runId: string): Promise<string> {
  const events: string[] = [];
  for await (const event of user1.runs.joinStream(null, runId)) events.push(`${event.event} ${JSON.stringify(event.data)}`);
  return events.join('\n');
}

// The same attempts against the JavaScript app and its Python twin (the same handlers in langgraph_sdk.Auth).
describe.each(graphLanguages())('%s app', (language: GraphLanguage) => {
  beforeAll(async () => {
    database = await createTestDatabase('tenants');
    runtime = await startDevRuntime(fixtureIn('runtime-auth', language), database.url);
    user1 = new Client({ apiUrl: runtime.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer user1-token' } });
    user2 = new Client({ apiUrl: runtime.url, apiKey: null, defaultHeaders: { Authorization: 'Bearer user2-token' } });
    t1 = (await user1.threads.create({ metadata: { topic: SECRET } })).thread_id;
    await user1.runs.wait(t1, 'agent', { input: said(SECRET) });
    t1Run = (await user1.runs.list(t1))[0]!.run_id;
    t1Checkpoint = (await user1.threads.getState(t1)).checkpoint.checkpoint_id!;
    cronOfT1 = (await user1.crons.createForThread(t1, 'agent', { schedule: '0 0 1 1 *', input: said(SECRET) })).cron_id;
    t2 = (await user2.threads.create()).thread_id;
    await user2.runs.wait(t2, 'agent', { input: said('mine') });
  }, RUNTIME_START_MS + 30_000);

  afterAll(async () => {
    await runtime?.stop();
    await database?.drop();
  });

  describe('a checkpoint in a request body cannot name another thread (reproductions 1-6)', () => {
    const other = () => ({ thread_id: t1 });
    test.each([
      [
        '1: POST /threads/T2/runs/wait',
        () => [`/threads/${t2}/runs/wait`, { assistant_id: 'agent', input: said('x'), checkpoint: other() }],
      ],
      [
        '2: POST /threads/T2/runs/stream',
        () => [`/threads/${t2}/runs/stream`, { assistant_id: 'agent', input: said('x'), checkpoint: other() }],
      ],
      [
        '3: POST /threads/T2/runs (then join)',
        () => [`/threads/${t2}/runs`, { assistant_id: 'agent', input: said('x'), checkpoint: other() }],
      ],
      ['4: POST /threads/T2/state/checkpoint', () => [`/threads/${t2}/state/checkpoint`, { checkpoint: other() }]],
      ['5: POST /threads/T2/history', () => [`/threads/${t2}/history`, { checkpoint: other() }]],
      [
        '6: POST /threads/T2/state',
        () => [`/threads/${t2}/state`, { values: said('planted'), as_node: 'whoami', checkpoint: other() }],
      ],
    ] as Array<[string, () => [string, Record<string, unknown>]]>)(
      '%s with checkpoint.thread_id of user1 is a 422 naming the field, and T1 is untouched',
      async (_name, request) => {
        const before = await t1AsUser1();
        const [path, body] = request();
        const answer = await asUser2('POST', path, body);
        expectRefused(answer, 422);
        expect(answer.json.detail).toEqual([expect.objectContaining({ loc: ['body', 'checkpoint', 'thread_id'] })]);
        expect(await t1AsUser1()).toEqual(before);
      },
    );

    test('the same through the SDK: a fork of T2 at a checkpoint named with T1 reaches nothing of T1', async () => {
      const before = await t1AsUser1();
      await expect(
        user2.runs.wait(t2, 'agent', { input: said('x'), checkpoint: { thread_id: t1, checkpoint_id: t1Checkpoint } as never }),
      ).rejects.toThrow(/422/);
      await expect(user2.threads.getState(t2, { thread_id: t1, checkpoint_id: t1Checkpoint } as never)).rejects.toThrow(/422/);
      expect(await t1AsUser1()).toEqual(before);
    });

    test('a checkpoint echoed back whole from the same thread still works (the Python SDK sends it so)', async () => {
      const state = await user2.threads.getState(t2);
      const again = await asUser2('POST', `/threads/${t2}/state/checkpoint`, { checkpoint: state.checkpoint });
      expect(again.status).toBe(200);
      expect(again.json.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    });

    test('a checkpoint key outside checkpoint_id, checkpoint_ns, checkpoint_map is a 422; a threadless run takes no thread_id', async () => {
      const extra = await asUser2('POST', `/threads/${t2}/state/checkpoint`, {
        checkpoint: { checkpoint_id: 'x', namespace: 'y' },
      });
      expectRefused(extra, 422);
      expect(extra.json.detail).toEqual([expect.objectContaining({ loc: ['body', 'checkpoint', 'namespace'] })]);
      const stateless = await asUser2('POST', '/runs/wait', {
        assistant_id: 'agent',
        input: said('x'),
        checkpoint: { thread_id: t1 },
      });
      expectRefused(stateless, 422);
      const batch = await asUser2('POST', '/runs/batch', [{ assistant_id: 'agent', checkpoint: { thread_id: t1 } }]);
      expectRefused(batch, 422);
      expect(batch.json.detail).toEqual([expect.objectContaining({ loc: ['body', 0, 'checkpoint', 'thread_id'] })]);
      const cron = await asUser2('POST', `/threads/${t2}/runs/crons`, {
        assistant_id: 'agent',
        schedule: '0 0 1 1 *',
        checkpoint: { thread_id: t1 },
      });
      expectRefused(cron, 422);
    });

    test('config.configurable.thread_id never moves a run: the run stays on the thread of its path', async () => {
      const before = await t1AsUser1();
      const answer = await asUser2('POST', `/threads/${t2}/runs/wait`, {
        assistant_id: 'agent',
        input: said('via configurable'),
        config: { configurable: { thread_id: t1, checkpoint_id: t1Checkpoint } },
      });
      expect(answer.text).not.toContain(SECRET);
      expect(await t1AsUser1()).toEqual(before);
    });
  });

  describe('stateless runs have an owner (reproductions 7-9)', () => {
    test("7: user2 joining the stream of user1's stateless run gets the 404 event a missing run gets", async () => {
      const run = await user1.runs.create(null, 'agent', { input: said(SECRET) });
      expect(await joinedAsUser1(run.run_id)).toContain(SECRET);
      const answer = await asUser2('GET', `/runs/${run.run_id}/stream`);
      expect(answer.text).not.toContain(SECRET);
      expect(answer.text).toContain(`404: Run ${run.run_id} not found.`);
    });

    test("8: user2 cancelling user1's stateless run by id is a 404 and the run still runs to its end", async () => {
      const run = await user1.runs.create(null, 'agent', { input: said(SECRET), afterSeconds: 2 });
      expectRefused(await asUser2('POST', '/runs/cancel', { run_ids: [run.run_id] }), 404);
      expect(await joinedAsUser1(run.run_id)).toContain(SECRET);
    });

    test("9: user2's cancel of every pending and running run leaves user1's stateless runs alone", async () => {
      const mine = await user1.runs.create(null, 'agent', { input: said(SECRET), afterSeconds: 2 });
      const theirs = await user2.runs.create(null, 'agent', { input: said('x'), afterSeconds: 30 });
      const cancelled = await asUser2('POST', '/runs/cancel', { status: 'all' });
      expect(cancelled.status).toBe(204);
      expect(await joinedAsUser1(mine.run_id)).toContain(SECRET);
      // user2's own pending run was cancelled: cancelling it again by id finds it (so it is visible) and changes nothing.
      expect((await asUser2('POST', '/runs/cancel', { run_ids: [theirs.run_id] })).status).toBe(204);
    });

    test("a batched run of user1 is user1's alone too", async () => {
      const [run] = await user1.runs.createBatch([{ assistantId: 'agent', input: said(SECRET) }]);
      expect(await joinedAsUser1(run!.run_id)).toContain(SECRET);
      expect((await asUser2('GET', `/runs/${run!.run_id}/stream`)).text).toContain('404');
    });
  });

  describe("every route that names user1's thread, run or cron refuses user2", () => {
    const runBody = () => ({ assistant_id: 'agent', input: said('x') });
    const threadRoutes: Array<[string, string, () => string, (() => unknown)?]> = [
      ['GET', 'thread', () => `/threads/${t1}`],
      ['PATCH', 'thread', () => `/threads/${t1}`, () => ({ metadata: { owner: 'user2' } })],
      ['DELETE', 'thread', () => `/threads/${t1}`],
      ['GET', 'state', () => `/threads/${t1}/state`],
      ['GET', 'storage', () => `/threads/${t1}/storage`],
      ['GET', 'state at a checkpoint', () => `/threads/${t1}/state/${t1Checkpoint}`],
      [
        'POST',
        'state at a checkpoint',
        () => `/threads/${t1}/state/checkpoint`,
        () => ({ checkpoint: { checkpoint_id: t1Checkpoint } }),
      ],
      ['POST', 'state update', () => `/threads/${t1}/state`, () => ({ values: said('planted'), as_node: 'whoami' })],
      ['GET', 'history', () => `/threads/${t1}/history`],
      ['POST', 'history', () => `/threads/${t1}/history`, () => ({})],
      ['POST', 'copy', () => `/threads/${t1}/copy`, () => ({})],
      ['GET', 'thread stream', () => `/threads/${t1}/stream`],
      ['POST', 'protocol event stream', () => `/threads/${t1}/stream/events`, () => ({ channels: ['values', 'messages'] })],
      ['GET', 'protocol event stream (EventSource form)', () => `/threads/${t1}/stream/events?channels=values`],
      ['POST', 'protocol run.start', () => `/threads/${t1}/commands`, () => ({ id: 1, method: 'run.start', params: runBody() })],
      [
        'POST',
        'protocol input.respond',
        () => `/threads/${t1}/commands`,
        () => ({ id: 1, method: 'input.respond', params: { interrupt_id: 'x', response: 'y' } }),
      ],
      [
        'POST',
        'protocol state.get',
        () => `/threads/${t1}/commands`,
        () => ({ id: 1, method: 'state.get', params: { namespace: [] } }),
      ],
      ['POST', 'protocol agent.getTree', () => `/threads/${t1}/commands`, () => ({ id: 1, method: 'agent.getTree', params: {} })],
      [
        'POST',
        'protocol state.listCheckpoints',
        () => `/threads/${t1}/commands`,
        () => ({ id: 1, method: 'state.listCheckpoints', params: {} }),
      ],
      ['GET', 'runs of the thread', () => `/threads/${t1}/runs`],
      ['POST', 'background run', () => `/threads/${t1}/runs`, runBody],
      [
        'POST',
        'background run creating the thread if missing',
        () => `/threads/${t1}/runs`,
        () => ({ ...runBody(), if_not_exists: 'create' }),
      ],
      ['POST', 'streamed run', () => `/threads/${t1}/runs/stream`, runBody],
      [
        'POST',
        'streamed run creating the thread if missing',
        () => `/threads/${t1}/runs/stream`,
        () => ({ ...runBody(), if_not_exists: 'create' }),
      ],
      ['POST', 'waited run', () => `/threads/${t1}/runs/wait`, runBody],
      [
        'POST',
        'waited run queued behind others',
        () => `/threads/${t1}/runs/wait`,
        () => ({ ...runBody(), multitask_strategy: 'enqueue' }),
      ],
      ['POST', 'cron on the thread', () => `/threads/${t1}/runs/crons`, () => ({ assistant_id: 'agent', schedule: '* * * * *' })],
      ['GET', 'run', () => `/threads/${t1}/runs/${t1Run}`],
      ['DELETE', 'run', () => `/threads/${t1}/runs/${t1Run}`],
      ['POST', 'run cancel', () => `/threads/${t1}/runs/${t1Run}/cancel`],
      ['GET', 'run join', () => `/threads/${t1}/runs/${t1Run}/join`],
      ['GET', "user1's run under user2's own thread", () => `/threads/${t2}/runs/${t1Run}`],
      ['POST', 'bulk cancel on the thread', () => '/runs/cancel', () => ({ thread_id: t1, status: 'all' })],
      ['POST', 'bulk cancel of the run', () => '/runs/cancel', () => ({ run_ids: [t1Run] })],
      [
        'POST',
        'A2A message on the thread as its context',
        () => '/a2a/agent',
        () => ({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: { message: { role: 'user', messageId: 'm', contextId: t1, parts: [{ kind: 'text', text: 'x' }] } },
        }),
      ],
      ['GET', 'cron', () => `/runs/crons/${cronOfT1}`],
      ['PATCH', 'cron', () => `/runs/crons/${cronOfT1}`, () => ({ enabled: false })],
      ['DELETE', 'cron', () => `/runs/crons/${cronOfT1}`],
    ];

    // Every row with its body slot filled: jest takes a missing last argument for a `done` callback.
    const rows = threadRoutes.map(([method, what, path, body]) => [method, what, path, body ?? (() => undefined)] as const);
    test.each(rows)('%s %s is a 404 with a detail, and T1 is as it was', async (method, _what, path, body) => {
      const before = await t1AsUser1();
      expectRefused(await asUser2(method, path(), body()), 404);
      expect(await t1AsUser1()).toEqual(before);
    });

    test("A2A tasks/get of user1's run is task-not-found for user2", async () => {
      const answer = await asUser2('POST', '/a2a/agent', { jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { id: t1Run } });
      expect(answer.json).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32001, message: `Task ${t1Run} not found.` } });
    });

    test("a WebSocket on user1's thread is refused at the handshake with 404", async () => {
      const socket = new WebSocket(`${runtime.url.replace('http', 'ws')}/threads/${t1}/stream/events`, {
        headers: { authorization: 'Bearer user2-token' },
      });
      const status = await new Promise<number>((resolve) => {
        socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.once('open', () => resolve(101));
        socket.once('error', () => resolve(-1));
      });
      expect(status).toBe(404);
    });

    test('a protocol stream user2 opened on a thread id before user1 created it sends user2 nothing of it', async () => {
      const threadId = crypto.randomUUID();
      const abort = new AbortController();
      const watching = fetch(`${runtime.url}/threads/${threadId}/stream/events`, {
        method: 'POST',
        headers: { authorization: 'Bearer user2-token', 'content-type': 'application/json' },
        body: JSON.stringify({ channels: ['values', 'messages', 'lifecycle'] }),
        signal: abort.signal,
      });
      const response = await watching;
      expect(response.status).toBe(200);
      const body = response.text();
      const started = await as('user1-token', 'POST', `/threads/${threadId}/commands`, {
        id: 1,
        method: 'run.start',
        params: { assistant_id: 'agent', input: said(SECRET) },
      });
      expect(started.json).toMatchObject({ type: 'success' });
      await user1.runs.join(threadId, started.json.result.run_id);
      // The stream ended by itself once the thread turned out to be user1's, with nothing sent.
      const text = await Promise.race([body, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 5_000))]);
      abort.abort();
      expect(text).toBe('');
    });

    test("the run join stream of user1's run is the 404 event of a missing thread", async () => {
      const answer = await asUser2('GET', `/threads/${t1}/runs/${t1Run}/stream`);
      expect(answer.text).toContain(`404: Thread with ID ${t1} not found.`);
      expect(answer.text).not.toContain(SECRET);
    });

    test('searches, counts and prunes see nothing of user1', async () => {
      expect((await asUser2('POST', '/threads/search', { ids: [t1] })).json).toEqual([]);
      expect((await asUser2('GET', `/threads?ids=${t1}`)).json).toEqual([]);
      expect((await asUser2('POST', '/threads/count', { metadata: { topic: SECRET } })).json).toBe(0);
      expect((await asUser2('POST', '/runs/crons/search', { thread_id: t1 })).json).toEqual([]);
      expect((await asUser2('POST', '/runs/crons/count', { thread_id: t1 })).json).toBe(0);
      const before = await t1AsUser1();
      expect((await asUser2('POST', '/threads/prune', { thread_ids: [t1], strategy: 'delete' })).json).toEqual({
        pruned_count: 0,
      });
      expect((await asUser2('POST', '/threads/prune', { thread_ids: [t1], strategy: 'keep_latest' })).json).toEqual({
        pruned_count: 0,
      });
      expect(await t1AsUser1()).toEqual(before);
      expect((await user1.crons.search({ threadId: t1 })).map((cron) => cron.cron_id)).toEqual([cronOfT1]);
    });

    test("store items under user1's namespace are refused to user2 on every store route", async () => {
      await user1.store.putItem(['user1', 'notes'], 'n', { text: SECRET });
      expectRefused(await asUser2('GET', '/store/items?namespace=user1.notes&key=n'), 403);
      expectRefused(await asUser2('PUT', '/store/items', { namespace: ['user1', 'notes'], key: 'n', value: { text: 'x' } }), 403);
      expectRefused(await asUser2('DELETE', '/store/items', { namespace: ['user1', 'notes'], key: 'n' }), 403);
      expectRefused(await asUser2('POST', '/store/items/search', { namespace_prefix: ['user1'] }), 403);
      expectRefused(await asUser2('POST', '/store/namespaces', { prefix: ['user1'] }), 403);
      expect((await user1.store.getItem(['user1', 'notes'], 'n'))?.value).toEqual({ text: SECRET });
    });
  });
});
