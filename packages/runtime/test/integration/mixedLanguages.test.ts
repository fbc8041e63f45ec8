/**
 * One graphx.json naming a JavaScript graph and a Python graph (test/fixtures/apps/runtime-mixed): one server, one
 * wire; and a Python app whose module or dependencies are wrong stops `graphx dev` with a message naming them. A uv
 * workspace (pipeline-echo-uv) is served by `graphx dev` from its uv.lock.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { findFreePort } from '@graphx/kit/net/ports';
import {
  createTestDatabase,
  RUNTIME_START_MS,
  projectRoot,
  startDevRuntime,
  type RuntimeProcess,
} from './support/runtimeHarness';

const hi = { messages: [{ role: 'user', content: 'hi' }] };
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let client: Client;

beforeAll(async () => {
  database = await createTestDatabase('mixed');
  runtime = await startDevRuntime('runtime-mixed', database.url);
  client = new Client({ apiUrl: runtime.url, apiKey: null });
}, RUNTIME_START_MS + 30_000);

afterAll(async () => {
  const exitCode = await runtime?.stop();
  await database?.drop();
  expect(exitCode).toBe(0);
});

test('the JavaScript and the Python echo graph of one app answer the same run with the same events', async () => {
  const answers: Record<string, unknown> = {};
  for (const graph of ['js_agent', 'py_agent']) {
    const events = [];
    for await (const event of client.runs.stream(null, graph, { input: hi, streamMode: ['updates', 'custom'] }))
      events.push(event);
    expect(events.map((event) => event.event)).toEqual(['metadata', 'custom', 'updates', 'updates']);
    answers[graph] = (events[2]!.data as any).agent.messages[0];
  }
  expect(answers.js_agent).toMatchObject({ id: 'ai-1', content: 'echo: hi', type: 'ai' });
  expect(answers.py_agent).toMatchObject({ id: 'ai-1', content: 'echo: hi', type: 'ai' });
  const graphs = (await client.assistants.search({ limit: 10 })).map((assistant) => assistant.graph_id).sort();
  expect(graphs).toEqual(['js_agent', 'py_agent']);
});

test('a thread run by the Python graph keeps its state, read back through the same thread routes', async () => {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, 'py_agent', { input: hi });
  const state = await client.threads.getState<{ messages: Array<{ content: string }> }>(thread.thread_id);
  expect(state.values.messages.map((message) => message.content)).toEqual(['hi', 'echo: hi', 'ok']);
  expect((await client.threads.get(thread.thread_id)).metadata).toMatchObject({ graph_id: 'py_agent' });
});

test(
  'graphx dev serves a uv workspace: the environment made from its uv.lock, the code of its member importable',
  async () => {
    const uvApp = await startDevRuntime('pipeline-echo-uv', database.url);
    try {
      const uvClient = new Client({ apiUrl: uvApp.url, apiKey: null });
      // humanize is only in the lock; echo_uv.words only in the workspace member, which is not installed.
      expect(await uvClient.runs.wait(null, 'agent', { input: { input: 'hello' } })).toMatchObject({
        echo: 'echo: hello (five letters)',
      });
    } finally {
      await uvApp.stop();
    }
  },
  RUNTIME_START_MS + 30_000,
);

/** `graphx dev` of a throw-away app: its exit code and output (it must stop by itself). */
async function startBrokenApp(files: Record<string, string>): Promise<{ status: number | null; output: string }> {
  const appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-py-broken-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(appDir, name), text);
  const port = await findFreePort();
  try {
    const child = spawn(
      process.execPath,
      [path.join(projectRoot, 'bin', 'graphx.js'), 'dev', '--config', path.join(appDir, 'graphx.json'), '--port', String(port)],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATABASE_URI: database.url,
          GRAPHX_PYTHON_ENVS_DIR: path.join(projectRoot, '.test-data', 'python-envs'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 120_000,
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { status, output };
  } finally {
    fs.rmSync(appDir, { recursive: true, force: true });
  }
}

test('a Python graph whose module raises on import stops graphx dev with the file and the error', async () => {
  const failed = await startBrokenApp({
    'graphx.json': JSON.stringify({ graphs: { agent: './agent.py:graph' } }),
    'agent.py': 'raise RuntimeError("no model key")\n',
  });
  expect(failed.status).toBe(2);
  expect(failed.output).toMatch(/Cannot load .*agent\.py: RuntimeError: no model key/);
});

test('a dependency that would bring the Elastic-licensed server is refused naming the key', async () => {
  const failed = await startBrokenApp({
    'graphx.json': JSON.stringify({ graphs: { agent: './agent.py:graph' }, dependencies: ['langgraph-api'] }),
    'agent.py': 'graph = None\n',
  });
  expect(failed.status).toBe(2);
  expect(failed.output).toMatch(/graphx\.json "dependencies": "langgraph-api" is reserved/);
});
