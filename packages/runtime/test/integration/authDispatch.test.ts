/**
 * Every route of the agent server dispatches the app's authorization handler for its resource and action before it
 * acts, and the handler's refusal is the answer. The table below names, per route, the events it dispatches in
 * order (the Python Agent Server's resources and actions); a route added without an entry fails the first test.
 * `graphx dev` runs the probe fixture, whose handler logs each event per user and, for `deny` users, refuses the
 * first one with a 403 naming it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';
import { runtimeRoutes } from './support/runtimeRoutes';

interface Ids {
  assistantId: string;
  threadId: string;
  runId: string;
  checkpointId: string;
  statelessRunId: string;
  cronId: string;
}

interface Sample {
  path: string;
  body?: unknown;
}

type Entry =
  | { kind: 'dispatches'; events: string[]; sample: SampleOf }
  /** Answered without credentials: health, info, metrics, generative-UI files (a script tag sends none). */
  | { kind: 'public'; sample: Sample }
  /** Needs credentials but touches no resource of the API. */
  | { kind: 'authenticated'; why: string; sample: Sample };

const hi = { messages: [{ role: 'user', content: 'hi' }] };
type SampleOf = (ids: Ids) => Promise<Sample> | Sample;
const dispatches = (events: string[], sample: SampleOf): Entry => ({ kind: 'dispatches', events, sample });

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let logFile: string;
let ids: Ids;

/** A request as a probe user (`setup` builds what samples need; its events are logged under its own identity). */
async function call(mode: 'allow' | 'deny', id: string, method: string, sample: Sample): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer probe:${mode}:${id}`,
    accept: 'application/json, text/event-stream',
  };
  if (sample.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${runtime.url}${sample.path}`, {
    method,
    headers,
    body: sample.body === undefined ? undefined : JSON.stringify(sample.body),
  });
  // An event stream (a thread stream never ends by itself) is left once its answer began: dispatch came before it.
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) await response.body?.cancel();
  return response;
}

async function setup(method: string, sample: Sample): Promise<any> {
  const response = await call('allow', 'setup', method, sample);
  if (response.status >= 300) throw new Error(`${method} ${sample.path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? null : response.json();
}

const newThread = async () => ((await setup('POST', { path: '/threads', body: {} })) as { thread_id: string }).thread_id;
async function finishedRun(threadId: string): Promise<string> {
  const run = await setup('POST', { path: `/threads/${threadId}/runs`, body: { assistant_id: 'agent', input: hi } });
  await setup('GET', { path: `/threads/${threadId}/runs/${run.run_id}/join` });
  return run.run_id as string;
}

function eventsOf(identity: string): string[] {
  const lines = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n') : [];
  return lines.filter((line) => line.startsWith(`${identity} `)).map((line) => line.slice(identity.length + 1));
}

const TABLE: Record<string, Entry> = {
  'GET /ok': { kind: 'public', sample: { path: '/ok' } },
  'GET /info': { kind: 'public', sample: { path: '/info' } },
  'GET /metrics': { kind: 'public', sample: { path: '/metrics' } },
  'GET /openapi.json': { kind: 'public', sample: { path: '/openapi.json' } },
  'GET /docs': { kind: 'public', sample: { path: '/docs' } },
  'GET /docs/assets/:file': { kind: 'public', sample: { path: '/docs/assets/swagger-initializer.js' } },
  'GET /ui/:agent/:basename': { kind: 'public', sample: { path: '/ui/agent/index.js' } },
  'POST /ui/:agent': {
    kind: 'authenticated',
    why: "a graph's generative-UI page, named in graphx.json: no user's data",
    sample: { path: '/ui/agent', body: { name: 'card' } },
  },
  'GET /mcp': { kind: 'authenticated', why: 'answers 405: no stream without sessions', sample: { path: '/mcp' } },
  'GET /mcp/': { kind: 'authenticated', why: 'answers 405: no stream without sessions', sample: { path: '/mcp/' } },
  'DELETE /mcp': { kind: 'authenticated', why: 'ends no session: there are none', sample: { path: '/mcp' } },
  'DELETE /mcp/': { kind: 'authenticated', why: 'ends no session: there are none', sample: { path: '/mcp/' } },

  'POST /assistants': dispatches(['assistants:create'], () => ({ path: '/assistants', body: { graph_id: 'agent' } })),
  'POST /assistants/search': dispatches(['assistants:search'], () => ({ path: '/assistants/search', body: {} })),
  'POST /assistants/count': dispatches(['assistants:search'], () => ({ path: '/assistants/count', body: {} })),
  'GET /assistants/:assistantId': dispatches(['assistants:read'], (i) => ({ path: `/assistants/${i.assistantId}` })),
  'PATCH /assistants/:assistantId': dispatches(['assistants:update'], (i) => ({
    path: `/assistants/${i.assistantId}`,
    body: { metadata: { touched: true } },
  })),
  'DELETE /assistants/:assistantId': dispatches(['assistants:delete'], async () => {
    const assistant = await setup('POST', { path: '/assistants', body: { graph_id: 'agent' } });
    return { path: `/assistants/${assistant.assistant_id}` };
  }),
  'POST /assistants/:assistantId/versions': dispatches(['assistants:read'], (i) => ({
    path: `/assistants/${i.assistantId}/versions`,
    body: {},
  })),
  'POST /assistants/:assistantId/latest': dispatches(['assistants:update'], (i) => ({
    path: `/assistants/${i.assistantId}/latest`,
    body: { version: 1 },
  })),
  'GET /assistants/:assistantId/graph': dispatches(['assistants:read'], (i) => ({ path: `/assistants/${i.assistantId}/graph` })),
  'GET /assistants/:assistantId/schemas': dispatches(['assistants:read'], (i) => ({
    path: `/assistants/${i.assistantId}/schemas`,
  })),
  'GET /assistants/:assistantId/subgraphs': dispatches(['assistants:read'], (i) => ({
    path: `/assistants/${i.assistantId}/subgraphs`,
  })),
  'GET /assistants/:assistantId/subgraphs/:namespace': dispatches(['assistants:read'], (i) => ({
    path: `/assistants/${i.assistantId}/subgraphs/agent`,
  })),

  'POST /threads': dispatches(['threads:create'], () => ({ path: '/threads', body: {} })),
  'POST /threads/search': dispatches(['threads:search'], () => ({ path: '/threads/search', body: {} })),
  'GET /threads': dispatches(['threads:search'], () => ({ path: '/threads' })),
  'POST /threads/count': dispatches(['threads:search'], () => ({ path: '/threads/count', body: {} })),
  'POST /threads/prune': dispatches(['threads:delete'], async () => ({
    path: '/threads/prune',
    body: { thread_ids: [await newThread()] },
  })),
  'GET /threads/:threadId': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}` })),
  'PATCH /threads/:threadId': dispatches(['threads:update'], (i) => ({
    path: `/threads/${i.threadId}`,
    body: { metadata: { touched: true } },
  })),
  'DELETE /threads/:threadId': dispatches(['threads:delete'], async () => ({ path: `/threads/${await newThread()}` })),
  'GET /threads/:threadId/runs': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}/runs` })),
  'GET /threads/:threadId/state': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}/state` })),
  'GET /threads/:threadId/storage': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}/storage` })),
  'GET /threads/:threadId/state/:checkpointId': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/state/${i.checkpointId}`,
  })),
  'POST /threads/:threadId/state/checkpoint': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/state/checkpoint`,
    body: { checkpoint: { checkpoint_id: i.checkpointId } },
  })),
  'POST /threads/:threadId/state': dispatches(['threads:update'], async () => {
    const threadId = await newThread();
    await finishedRun(threadId);
    return { path: `/threads/${threadId}/state`, body: { values: hi, as_node: 'agent' } };
  }),
  'POST /threads/:threadId/history': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/history`,
    body: {},
  })),
  'GET /threads/:threadId/history': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}/history` })),
  'POST /threads/:threadId/copy': dispatches(['threads:read', 'threads:create'], (i) => ({
    path: `/threads/${i.threadId}/copy`,
    body: {},
  })),
  'GET /threads/:threadId/stream': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}/stream` })),
  // Protocol v2: the event stream is a read (SSE, or the WebSocket / EventSource form on GET); a command that starts or
  // resumes a run is a run, one that reads is a read.
  'POST /threads/:threadId/stream/events': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/stream/events`,
    body: { channels: ['values', 'lifecycle'] },
  })),
  'GET /threads/:threadId/stream/events': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/stream/events?channels=values`,
  })),
  'POST /threads/:threadId/commands': dispatches(['threads:create_run'], async () => ({
    path: `/threads/${await newThread()}/commands`,
    body: { id: 1, method: 'run.start', params: { assistant_id: 'agent', input: hi } },
  })),

  'POST /runs/stream': dispatches(['threads:create_run'], () => ({
    path: '/runs/stream',
    body: { assistant_id: 'agent', input: hi },
  })),
  'POST /runs/wait': dispatches(['threads:create_run'], () => ({
    path: '/runs/wait',
    body: { assistant_id: 'agent', input: hi },
  })),
  'POST /runs': dispatches(['threads:create_run'], () => ({ path: '/runs', body: { assistant_id: 'agent', input: hi } })),
  'POST /runs/batch': dispatches(['threads:create_run'], () => ({
    path: '/runs/batch',
    body: [{ assistant_id: 'agent', input: hi }],
  })),
  'POST /threads/:threadId/runs/stream': dispatches(['threads:create_run'], async () => ({
    path: `/threads/${await newThread()}/runs/stream`,
    body: { assistant_id: 'agent', input: hi },
  })),
  'POST /threads/:threadId/runs/wait': dispatches(['threads:create_run'], async () => ({
    path: `/threads/${await newThread()}/runs/wait`,
    body: { assistant_id: 'agent', input: hi },
  })),
  'POST /threads/:threadId/runs': dispatches(['threads:create_run'], async () => ({
    path: `/threads/${await newThread()}/runs`,
    body: { assistant_id: 'agent', input: hi },
  })),
  'GET /threads/:threadId/runs/:runId': dispatches(['threads:read'], (i) => ({ path: `/threads/${i.threadId}/runs/${i.runId}` })),
  'DELETE /threads/:threadId/runs/:runId': dispatches(['threads:delete'], async () => {
    const threadId = await newThread();
    return { path: `/threads/${threadId}/runs/${await finishedRun(threadId)}` };
  }),
  'POST /threads/:threadId/runs/:runId/cancel': dispatches(['threads:update'], (i) => ({
    path: `/threads/${i.threadId}/runs/${i.runId}/cancel`,
  })),
  'GET /threads/:threadId/runs/:runId/join': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/runs/${i.runId}/join`,
  })),
  'GET /threads/:threadId/runs/:runId/stream': dispatches(['threads:read'], (i) => ({
    path: `/threads/${i.threadId}/runs/${i.runId}/stream`,
  })),
  'GET /runs/:runId/stream': dispatches(['threads:read'], (i) => ({ path: `/runs/${i.statelessRunId}/stream` })),
  'POST /runs/cancel': dispatches(['threads:update'], () => ({ path: '/runs/cancel', body: { status: 'pending' } })),

  'PUT /store/items': dispatches(['store:put'], () => ({
    path: '/store/items',
    body: { namespace: ['probe', 'notes'], key: 'k', value: { text: 'x' } },
  })),
  'GET /store/items': dispatches(['store:get'], () => ({ path: '/store/items?namespace=probe.notes&key=k' })),
  'DELETE /store/items': dispatches(['store:delete'], () => ({
    path: '/store/items',
    body: { namespace: ['probe', 'notes'], key: 'k' },
  })),
  'POST /store/items/search': dispatches(['store:search'], () => ({
    path: '/store/items/search',
    body: { namespace_prefix: ['probe'] },
  })),
  'POST /store/namespaces': dispatches(['store:list_namespaces'], () => ({ path: '/store/namespaces', body: {} })),

  'POST /runs/crons': dispatches(['crons:create'], () => ({
    path: '/runs/crons',
    body: { assistant_id: 'agent', schedule: '0 0 1 1 *', input: hi },
  })),
  'POST /threads/:threadId/runs/crons': dispatches(['threads:read', 'crons:create'], (i) => ({
    path: `/threads/${i.threadId}/runs/crons`,
    body: { assistant_id: 'agent', schedule: '0 0 1 1 *', input: hi },
  })),
  'POST /runs/crons/search': dispatches(['crons:search'], () => ({ path: '/runs/crons/search', body: {} })),
  'POST /runs/crons/count': dispatches(['crons:search'], () => ({ path: '/runs/crons/count', body: {} })),
  'GET /runs/crons/:cronId': dispatches(['crons:read'], (i) => ({ path: `/runs/crons/${i.cronId}` })),
  'PATCH /runs/crons/:cronId': dispatches(['crons:update'], (i) => ({
    path: `/runs/crons/${i.cronId}`,
    body: { enabled: true },
  })),
  'DELETE /runs/crons/:cronId': dispatches(['crons:delete'], async () => {
    const cron = await setup('POST', { path: '/runs/crons', body: { assistant_id: 'agent', schedule: '0 0 1 1 *' } });
    return { path: `/runs/crons/${cron.cron_id}` };
  }),

  // A2A: the assistant is read first; a message is a run on its context (thread), answered as the task it became.
  'POST /a2a/:assistantId': dispatches(['assistants:read', 'threads:create_run', 'threads:read'], () => ({
    path: '/a2a/agent',
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hi' }] } },
    },
  })),
  'GET /a2a/:assistantId/.well-known/agent-card.json': dispatches(['assistants:read'], () => ({
    path: '/a2a/agent/.well-known/agent-card.json',
  })),
  'POST /mcp': dispatches(['assistants:search'], () => ({
    path: '/mcp',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  })),
  'POST /mcp/': dispatches(['assistants:search'], () => ({
    path: '/mcp/',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  })),
};

beforeAll(async () => {
  logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-auth-probe-')), 'events.log');
  database = await createTestDatabase('authprobe');
  runtime = await startDevRuntime('runtime-auth-probe', database.url, { AUTH_PROBE_LOG: logFile });
  const assistant = await setup('POST', { path: '/assistants', body: { graph_id: 'agent' } });
  const threadId = await newThread();
  const runId = await finishedRun(threadId);
  const state = await setup('GET', { path: `/threads/${threadId}/state` });
  const stateless = await setup('POST', { path: '/runs', body: { assistant_id: 'agent', input: hi } });
  const cron = await setup('POST', { path: '/runs/crons', body: { assistant_id: 'agent', schedule: '0 0 1 1 *' } });
  ids = {
    assistantId: assistant.assistant_id,
    threadId,
    runId,
    checkpointId: state.checkpoint.checkpoint_id,
    statelessRunId: stateless.run_id,
    cronId: cron.cron_id,
  };
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
  if (logFile) fs.rmSync(path.dirname(logFile), { recursive: true, force: true });
});

test('every route of the agent server has an entry in the dispatch table, and every entry is a route', () => {
  const routes = runtimeRoutes().map((route) => `${route.method} ${route.path}`);
  expect([...routes].sort()).toEqual(Object.keys(TABLE).sort());
});

const dispatching = Object.entries(TABLE).filter(
  (entry): entry is [string, Entry & { kind: 'dispatches' }] => entry[1].kind === 'dispatches',
);

test.each(dispatching)('%s dispatches its events in order, and a refusal of the first is the answer', async (route, entry) => {
  const method = route.split(' ')[0]!;
  const denied = crypto.randomUUID();
  const refused = await call('deny', denied, method, await entry.sample(ids));
  expect({ status: refused.status, body: await refused.json() }).toEqual({
    status: 403,
    body: { detail: `denied ${entry.events[0]}` },
  });
  expect(eventsOf(`probe-${denied}`)).toEqual([entry.events[0]]);

  const allowed = crypto.randomUUID();
  const answered = await call('allow', allowed, method, await entry.sample(ids));
  expect(answered.status).toBeLessThan(300);
  expect(eventsOf(`probe-${allowed}`)).toEqual(entry.events);
});

test.each(Object.entries(TABLE).filter(([, entry]) => entry.kind !== 'dispatches'))(
  '%s dispatches no authorization event (public routes need no credentials)',
  async (route, entry) => {
    const method = route.split(' ')[0]!;
    const sample = (entry as { sample: Sample }).sample;
    const anonymous = await fetch(`${runtime.url}${sample.path}`, {
      method,
      headers: sample.body === undefined ? {} : { 'content-type': 'application/json' },
      body: sample.body === undefined ? undefined : JSON.stringify(sample.body),
    });
    expect(anonymous.status === 401).toBe(entry.kind === 'authenticated');
    const identity = crypto.randomUUID();
    const answered = await call('deny', identity, method, sample);
    expect(answered.status).not.toBe(403);
    expect(eventsOf(`probe-${identity}`)).toEqual([]);
  },
);
