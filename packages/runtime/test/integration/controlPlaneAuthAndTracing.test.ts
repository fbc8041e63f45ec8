/**
 * A deployed runtime (`graphx runtime`, started as a rollout starts it) against a real control-plane API on
 * loopback: default X-Api-Key auth verified with the service token, debugging-UI users, and run records reaching
 * the deployment's tracing project, also when the control plane was down while the run happened.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@langchain/langgraph-sdk';
import { createTenant } from '../../../../test/support/env';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  seedDeployment,
  startControlPlane,
  startDeployedRuntime,
  type RuntimeProcess,
} from './support/runtimeHarness';

const hi = { messages: [{ role: 'user', content: 'hi' }] };
let controlPlane: Awaited<ReturnType<typeof startControlPlane>>;
const databases: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
const runtimes: RuntimeProcess[] = [];
let tenant: { tenantId: string; apiKey: string };
let otherTenant: { tenantId: string; apiKey: string };
let deployment: Awaited<ReturnType<typeof seedDeployment>>;
let runtime: RuntimeProcess;

async function deploy(app: string): Promise<RuntimeProcess> {
  const database = await createTestDatabase('cp');
  databases.push(database);
  const started = await startDeployedRuntime({
    app,
    databaseUrl: database.url,
    controlPlaneUrl: controlPlane.url,
    deploymentId: deployment.deploymentId,
    tenantId: tenant.tenantId,
    serviceToken: deployment.serviceToken,
  });
  runtimes.push(started);
  return started;
}

async function streamRun(url: string, headers: Record<string, string>) {
  return fetch(`${url}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ assistant_id: 'agent', input: hi, stream_mode: 'updates' }),
  });
}

async function tracedRuns(
  projectId: string,
): Promise<Array<{ id: string; status: string; latency_ms: number; outputs: any; assistant_id: string }>> {
  const response = await fetch(`${controlPlane.url}/v1/projects/${projectId}/runs?limit=100`, {
    headers: { 'x-api-key': tenant.apiKey },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { resources: any[] }).resources;
}

async function waitForTrace(runId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = (await tracedRuns(deployment.projectId)).find((run) => run.id === runId);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${runId} never reached the tracing project`);
}

beforeAll(async () => {
  controlPlane = await startControlPlane();
  tenant = await createTenant(controlPlane.db, 'rt');
  otherTenant = await createTenant(controlPlane.db, 'other');
  deployment = await seedDeployment(controlPlane.db, tenant.tenantId);
  runtime = await deploy('runtime-echo');
});

afterAll(async () => {
  for (const started of runtimes) await started.stop();
  for (const database of databases) await database.drop();
  await controlPlane?.close();
});

test('without custom auth, no key or a key of another tenant is a 401 and a key of the tenant is a 200', async () => {
  const missing = await streamRun(runtime.url, {});
  expect(missing.status).toBe(401);
  expect(await missing.json()).toEqual({ detail: 'Missing X-Api-Key header.' });
  const foreign = await streamRun(runtime.url, { 'x-api-key': otherTenant.apiKey });
  expect(foreign.status).toBe(401);
  expect(((await foreign.json()) as { detail: string }).detail).toBe('Invalid API key.');
  const own = await streamRun(runtime.url, { 'x-api-key': tenant.apiKey });
  expect(own.status).toBe(200);
  expect(await own.text()).toContain('event: updates');
  expect((await fetch(`${runtime.url}/info`)).status).toBe(200);
});

test.each(graphLanguages())(
  "the app's own Client (no address) passes key auth, a forged loopback header does not, a webhook path is refused (%s app)",
  async (language) => {
    const app = await deploy(fixtureIn('runtime-http', language));
    const self = await fetch(`${app.url}/custom/self`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(self.status).toBe(200);
    expect(await self.json()).toEqual({ assistants: ['agent'] });
    const forged = await streamRun(app.url, { 'x-graphx-loopback': 'guessed-token' });
    expect(forged.status).toBe(401);
    // A deployed app refuses webhook paths (they would drive its own routes) unless its operator allows loopback.
    const client = new Client({ apiUrl: app.url, apiKey: tenant.apiKey });
    await client.runs.create(null, 'agent', { input: hi, webhook: '/custom/hook' });
    for (let attempt = 0; attempt < 100 && !app.output().includes('GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS=any'); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(app.output()).toContain('a webhook path posts to the app itself: refused');
    const hook = await fetch(`${app.url}/custom/hook`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(((await hook.json()) as { hook: unknown }).hook).toBeNull();
  },
  RUNTIME_START_MS,
);

test('the MCP endpoint takes the tenant key as every route does: a client without it cannot connect, one with it calls a tool', async () => {
  const connect = async (headers: Record<string, string>) => {
    const client = new McpClient({ name: 'graphx-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${runtime.url}/mcp`), { requestInit: { headers } }));
    return client;
  };
  await expect(connect({})).rejects.toThrow(/Missing X-Api-Key header/);
  await expect(connect({ 'x-api-key': otherTenant.apiKey })).rejects.toThrow(/Invalid API key/);
  const client = await connect({ 'x-api-key': tenant.apiKey });
  try {
    const result = await client.callTool({ name: 'agent', arguments: { messages: [{ role: 'user', content: 'via mcp' }] } });
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text).messages[1].content).toBe('echo: via mcp');
  } finally {
    await client.close();
  }
});

test('the service-token routes refuse a caller without the deployment token', async () => {
  const response = await fetch(`${controlPlane.url}/internal/v1/api-keys/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token' },
    body: JSON.stringify({ api_key: tenant.apiKey }),
  });
  expect(response.status).toBe(401);
});

test("a run's record appears in the deployment's tracing project with its status, latency and output", async () => {
  const client = new Client({ apiUrl: runtime.url, apiKey: tenant.apiKey });
  let runId = '';
  for await (const event of client.runs.stream(null, 'agent', { input: hi, streamMode: 'updates' })) {
    if (event.event === 'metadata') runId = (event.data as { run_id: string }).run_id;
  }
  const record = await waitForTrace(runId);
  expect(record).toMatchObject({ id: runId, status: 'success', assistant_id: 'agent' });
  expect(record.latency_ms).toEqual(expect.any(Number));
  expect(record.outputs.messages.map((message: { content: string }) => message.content)).toEqual(['hi', 'echo: hi', 'ok']);
  const projects = await fetch(`${controlPlane.url}/v1/projects`, { headers: { 'x-api-key': otherTenant.apiKey } });
  expect(((await projects.json()) as { resources: Array<{ id: string }> }).resources.map((project) => project.id)).not.toContain(
    deployment.projectId,
  );
  const foreignRead = await fetch(`${controlPlane.url}/v1/projects/${deployment.projectId}/runs`, {
    headers: { 'x-api-key': otherTenant.apiKey },
  });
  expect(foreignRead.status).toBe(404);
});

test('runs made while the control plane is down stream at full speed and are recorded once it is back', async () => {
  const client = new Client({ apiUrl: runtime.url, apiKey: tenant.apiKey });
  // Warm the key cache, then take the control plane away.
  for await (const event of client.runs.stream(null, 'agent', { input: hi, streamMode: 'updates' })) void event;
  const port = controlPlane.port;
  await controlPlane.close();
  let runId = '';
  const started = Date.now();
  for await (const event of client.runs.stream(null, 'agent', { input: hi, streamMode: 'updates' })) {
    if (event.event === 'metadata') runId = (event.data as { run_id: string }).run_id;
  }
  expect(Date.now() - started).toBeLessThan(1_000);
  await new Promise((resolve) => setTimeout(resolve, 1_500)); // a delivery attempt fails meanwhile
  controlPlane = await startControlPlane(port);
  expect(await waitForTrace(runId, 40_000)).toMatchObject({ status: 'success' });
});

test('with custom auth, a debugging-UI user needs a valid key of the tenant and then acts as the key owner', async () => {
  const authRuntime = await deploy('runtime-auth');
  const studio = { 'x-auth-scheme': 'graphx-studio' };
  expect((await streamRun(authRuntime.url, studio)).status).toBe(401);
  expect((await streamRun(authRuntime.url, { ...studio, 'x-api-key': otherTenant.apiKey })).status).toBe(401);
  const admitted = await streamRun(authRuntime.url, { ...studio, 'x-api-key': tenant.apiKey });
  expect(admitted.status).toBe(200);
  const body = await admitted.text();
  const answer = JSON.parse(JSON.parse(body.split('event: updates\ndata: ')[1]!.split('\n')[0]!).whoami.messages[0].content);
  expect(answer).toMatchObject({ identity: 'rt-owner', kind: 'StudioUser' });
  expect((await streamRun(authRuntime.url, { authorization: 'Bearer user1-token' })).status).toBe(200);
});
