/**
 * graphx.json `http` in `graphx dev`: a Fetch-style custom app (`http.app`) answers its own routes first and leaves
 * the rest to the API; `http.cors` governs preflights and responses; `http.disable_store` turns the store routes off.
 */
import { Client } from '@langchain/langgraph-sdk';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;

beforeAll(async () => {
  database = await createTestDatabase('http');
  runtime = await startDevRuntime('runtime-http', database.url);
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

test("the custom app's routes answer first, with any body and their own status, headers and cookies", async () => {
  expect(await (await fetch(`${runtime.url}/custom/hello?name=ada`)).json()).toEqual({ hello: 'ada' });
  const echoed = await fetch(`${runtime.url}/custom/echo`, { method: 'POST', body: 'plain text, not JSON' });
  expect(echoed.status).toBe(201);
  expect(await echoed.text()).toBe('you sent: plain text, not JSON');
  expect(echoed.headers.get('x-custom')).toBe('yes');
  expect(echoed.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
  expect(await (await fetch(`${runtime.url}/info`)).json()).toEqual({ custom: true });
});

test('what the custom app does not serve falls through to the API, whose answers are unchanged', async () => {
  const client = new Client({ apiUrl: runtime.url, apiKey: null });
  const thread = await client.threads.create();
  const values = await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'hi' }] } });
  expect((values as any).messages.at(-2).content).toBe('echo: hi');
  const notJson = await fetch(`${runtime.url}/threads/search`, { method: 'POST', body: '{nope' });
  expect(notJson.status).toBe(422);
  expect(JSON.stringify(((await notJson.json()) as any).detail)).toMatch(/json_invalid|JSON decode/);
  expect((await fetch(`${runtime.url}/nowhere`)).status).toBe(404);
});

test('http.disable_store answers 404 for the store routes only', async () => {
  const search = await fetch(`${runtime.url}/store/items/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespace_prefix: ['a'] }),
  });
  expect(search.status).toBe(404);
  expect(((await search.json()) as any).detail).toMatch(/store/);
  expect((await fetch(`${runtime.url}/threads`)).status).toBe(200);
});

test('http.cors: a preflight from a listed or matching origin is allowed with the configured methods, headers, age, credentials', async () => {
  for (const origin of ['https://app.example', 'https://abc.preview.example']) {
    const preflight = await fetch(`${runtime.url}/threads/search`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(Object.fromEntries([...preflight.headers].filter(([name]) => name.startsWith('access-control')))).toEqual({
      'access-control-allow-origin': origin,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'content-type, x-api-key',
      'access-control-max-age': '600',
    });
  }
});

test('http.cors: another origin or method is refused at preflight, and a response carries CORS only for allowed origins', async () => {
  const preflight = (origin: string, method: string) =>
    fetch(`${runtime.url}/threads/search`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': method },
    });
  const stranger = await preflight('https://evil.example', 'POST');
  expect(stranger.status).toBe(400);
  expect(((await stranger.json()) as any).detail).toMatch(/origin/);
  expect((await preflight('https://app.example', 'DELETE')).status).toBe(400);

  const allowed = await fetch(`${runtime.url}/custom/hello`, { headers: { Origin: 'https://app.example' } });
  expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
  expect(allowed.headers.get('access-control-expose-headers')).toBe('X-Custom');
  expect(allowed.headers.get('vary')).toMatch(/Origin/);
  const refused = await fetch(`${runtime.url}/threads`, { headers: { Origin: 'https://evil.example' } });
  expect(refused.status).toBe(200);
  expect(refused.headers.get('access-control-allow-origin')).toBeNull();
});
