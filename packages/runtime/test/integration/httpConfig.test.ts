/**
 * graphx.json `http` in `graphx dev`, for both languages: a custom app (`http.app`: a Fetch-style app in JavaScript, a
 * FastAPI app in Python) answers its own routes first and leaves the rest to the API; `http.cors` governs preflights
 * and responses; `http.configurable_headers` chooses the headers a run sees; `http.disable_store` turns the store
 * routes off.
 */
import { Client } from '@langchain/langgraph-sdk';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';

describe.each(graphLanguages())('%s app', (language: GraphLanguage) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    database = await createTestDatabase(`http_${language}`);
    runtime = await startDevRuntime(fixtureIn('runtime-http', language), database.url);
  }, RUNTIME_START_MS);

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

  test('a streamed response of the custom app reaches the client as it is sent, not when it ends', async () => {
    const response = await fetch(`${runtime.url}/custom/stream`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('\n\n')) received += decoder.decode((await reader.read()).value);
    // The app holds its second event until this call: had anything buffered the first, it would come with "never".
    expect(received).toBe('data: first\n\n');
    expect((await fetch(`${runtime.url}/custom/release`, { method: 'POST' })).status).toBe(200);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) received += decoder.decode(chunk.value);
    expect(received).toBe('data: first\n\ndata: released\n\n');
  });

  test('a client that goes away mid-stream cancels the custom route, and the server keeps serving', async () => {
    const gone = new AbortController();
    const response = await fetch(`${runtime.url}/custom/stream`, { signal: gone.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    gone.abort();
    const streamEnd = async () => ((await (await fetch(`${runtime.url}/custom/stream/end`)).json()) as { end: string }).end;
    for (let attempt = 0; attempt < 50 && (await streamEnd()) === 'open'; attempt += 1) await sleep(100);
    expect(await streamEnd()).toBe('cancelled');
  });

  test('a custom route that throws answers 500, and the server keeps serving', async () => {
    expect((await fetch(`${runtime.url}/custom/fail`)).status).toBe(500);
    expect(await (await fetch(`${runtime.url}/custom/hello`)).json()).toEqual({ hello: 'world' });
  });

  if (language === 'python') {
    test("the Python app's lifespan runs, and its state reaches the app's requests", async () => {
      expect(await (await fetch(`${runtime.url}/custom/lifespan`)).json()).toEqual({ started_by: 'lifespan' });
    });

    test("as under the Python server, a path of the app asked with another method is the API's first, else the app's 405", async () => {
      const put = await fetch(`${runtime.url}/threads/search`, { method: 'PUT' });
      expect(await put.json()).toEqual({ custom: 'put' });
      const post = await fetch(`${runtime.url}/threads/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(post.status).toBe(200);
      expect(Array.isArray(await post.json())).toBe(true);
      const wrongMethod = await fetch(`${runtime.url}/custom/hello`, { method: 'DELETE' });
      expect(wrongMethod.status).toBe(405);
      expect(await wrongMethod.json()).toEqual({ detail: 'Method Not Allowed' });
    });

    test("/openapi.json lists the FastAPI app's routes beside the API's, as the Python server's does", async () => {
      const document = (await (await fetch(`${runtime.url}/openapi.json`)).json()) as any;
      expect(document.paths['/custom/hello'].get.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'name', in: 'query' })]),
      );
      expect(Object.keys(document.paths['/custom/echo'])).toEqual(['post']);
      // Where both answer a path, each keeps its methods: the app's PUT beside the API's POST.
      expect(Object.keys(document.paths['/threads/search']).sort()).toEqual(['post', 'put']);
      expect(document.paths).toHaveProperty(['/threads']);
      expect(document.components.securitySchemes).toHaveProperty('apiKey');
    });
  }

  test('the custom app never shadows /ok, /metrics, /docs or /openapi.json', async () => {
    expect(await (await fetch(`${runtime.url}/ok`)).json()).toEqual({ ok: true });
    expect(await (await fetch(`${runtime.url}/metrics`)).text()).not.toMatch(/shadowed/);
    expect(await (await fetch(`${runtime.url}/docs`)).text()).not.toMatch(/shadowed/);
    expect(((await (await fetch(`${runtime.url}/openapi.json`)).json()) as any).paths).toHaveProperty(['/threads']);
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

  test('http.disable_ui and http.disable_mcp answer 404 for the generative-UI and MCP routes', async () => {
    const ui = await fetch(`${runtime.url}/ui/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(ui.status).toBe(404);
    expect(((await ui.json()) as any).detail).toMatch(/ui routes are disabled/);
    const mcp = await fetch(`${runtime.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(404);
    expect(((await mcp.json()) as any).detail).toMatch(/mcp routes are disabled/);
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

  test("a run's graph sees the request headers http.configurable_headers lets through, never credentials", async () => {
    const client = new Client({
      apiUrl: runtime.url,
      apiKey: null,
      defaultHeaders: {
        'x-request-tag': 'from-header',
        'my-prefix-team': 'blue',
        'x-secret-token': 'excluded',
        'accept-language': 'fr',
        'x-api-key': 'a-secret',
        'x-graphx-loopback': 'forged',
      },
    });
    const values = (await client.runs.wait(null, 'headers', {
      input: {},
      config: { configurable: { 'x-request-tag': 'from-body' } },
    })) as { seen: Record<string, string> };
    // As the anchor: the header wins over the same key sent in the body.
    expect(values.seen['x-request-tag']).toBe('from-header');
    expect(values.seen['user-agent']).toBeTruthy();
    // `includes` names any header; `excludes` wins over it; what no pattern includes stays out.
    expect(values.seen['my-prefix-team']).toBe('blue');
    expect(values.seen).not.toHaveProperty('x-secret-token');
    expect(values.seen).not.toHaveProperty('accept-language');
    expect(values.seen).not.toHaveProperty('x-api-key');
    expect(values.seen).not.toHaveProperty('x-graphx-loopback');
  });

  test("a webhook given as a path is posted to the app's own route when a waited or background run ends", async () => {
    const client = new Client({ apiUrl: runtime.url, apiKey: null });
    const thread = await client.threads.create();
    const readHook = async () => ((await (await fetch(`${runtime.url}/custom/hook`)).json()) as { hook: any }).hook;
    const waited = await client.runs.create(thread.thread_id, 'agent', { input: { messages: [] }, webhook: '/custom/hook' });
    await client.runs.join(thread.thread_id, waited.run_id);
    for (let attempt = 0; attempt < 50 && (await readHook())?.run_id !== waited.run_id; attempt += 1) await sleep(100);
    expect(await readHook()).toMatchObject({ run_id: waited.run_id, status: 'success' });

    const response = await fetch(`${runtime.url}/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: 'hook me' }] },
        webhook: '/custom/hook',
      }),
    });
    const runId = response.headers.get('content-location')!.split('/').at(-1);
    for (let attempt = 0; attempt < 50 && (await readHook())?.run_id !== runId; attempt += 1) await sleep(100);
    const hook = await readHook();
    expect(hook).toMatchObject({ run_id: runId, thread_id: thread.thread_id, status: 'success' });
    expect(hook.values.messages.at(-2).content).toBe('echo: hook me');

    // Another host is not a path: `//host/x` is refused before any run starts.
    const refused = await fetch(`${runtime.url}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: { messages: [] }, webhook: '//169.254.169.254/latest' }),
    });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(await refused.json())).toMatch(/webhook/);
  });

  test('app code reaches its own server with a Client made without an address', async () => {
    const answer = await fetch(`${runtime.url}/custom/self`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ assistants: ['agent'] });
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
