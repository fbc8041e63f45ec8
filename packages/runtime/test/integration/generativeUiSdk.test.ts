/**
 * Generative UI (graphx.json `ui`) through the official JS client against `graphx dev`: the client's UI loader
 * (`client["~ui"].getComponent`, what `LoadExternalComponent` calls) gets the HTML that loads the agent's bundle,
 * the bundle and its CSS are served, and the bundle renders the named component through the page's store with
 * react and the `ui_config.shared` packages taken from the page.
 */
import vm from 'node:vm';
import { Client } from '@langchain/langgraph-sdk';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let client: Client;

beforeAll(async () => {
  database = await createTestDatabase('genui');
  runtime = await startDevRuntime('runtime-ui', database.url);
  client = new Client({ apiUrl: runtime.url, apiKey: null });
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

const uiClient = () => (client as unknown as { '~ui': { getComponent(agent: string, name: string): Promise<string> } })['~ui'];

test('the client loads an agent component: a stylesheet link and a script that renders the named component', async () => {
  const html = await uiClient().getComponent('agent', 'weather');
  const css = html.match(/<link rel="stylesheet" href="([^"]+)" \/>/)![1]!;
  const script = html.match(
    /<script src="([^"]+)" onload='__LGUI_agent\.render\("weather", "\{\{shadowRootId\}\}"\)'><\/script>/,
  )![1]!;
  expect(css).toBe(`${runtime.url}/ui/agent/entrypoint.css`);
  expect(script).toBe(`${runtime.url}/ui/agent/entrypoint.js`);

  const style = await fetch(css);
  expect(style.headers.get('content-type')).toMatch(/^text\/css/);
  expect(await style.text()).toContain('.weather-card');
  const code = await fetch(script);
  expect(code.headers.get('content-type')).toMatch(/javascript/);

  // The page's side, as the SDK's LoadExternalComponent sets it up: its modules and a store receiving the component.
  const rendered: Array<{ shadowRootId: string; component: (props: unknown) => unknown }> = [];
  const jsx = (type: unknown, props: Record<string, unknown>) => ({ type, props });
  const pageModules: Record<string, unknown> = {
    'react/jsx-runtime': { jsx, jsxs: jsx, Fragment: 'fragment' },
    '@acme/design-system': { Badge: 'Badge' },
  };
  const shadowRoot = { appendChild: () => undefined };
  const page: Record<PropertyKey, unknown> = {
    document: { getElementById: () => ({ shadowRoot }), createElement: () => ({}) },
    [Symbol.for('LGUI_REQUIRE')]: (name: string) => pageModules[name],
    [Symbol.for('LGUI_EXT_STORE')]: {
      respond: (shadowRootId: string, component: (props: unknown) => unknown) => rendered.push({ shadowRootId, component }),
    },
  };
  page.window = page;
  page.globalThis = page;
  vm.runInNewContext(`${await code.text()}\n__LGUI_agent.render("weather", "root-1")`, page);
  expect(rendered).toHaveLength(1);
  expect(rendered[0]!.shadowRootId).toBe('root-1');
  expect(rendered[0]!.component({ city: 'Paris' })).toEqual({
    type: 'div',
    props: { className: 'weather-card', children: { type: 'Badge', props: { children: ['Paris', ': sunny'] } } },
  });
});

test('behind the gateway the bundle URLs keep the deployment path the gateway names in X-Forwarded-Prefix', async () => {
  // What src/targets/local/gateway.ts sends for http://127.0.0.1:8123/<deployment-name>/ui/agent.
  const response = await fetch(`${runtime.url}/ui/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-prefix': '/my-app' },
    body: JSON.stringify({ name: 'weather' }),
  });
  const html = await response.text();
  expect(html).toContain(`<link rel="stylesheet" href="${runtime.url}/my-app/ui/agent/entrypoint.css" />`);
  expect(html).toContain(`<script src="${runtime.url}/my-app/ui/agent/entrypoint.js"`);
  // A prefix that is not a plain path is ignored rather than written into the page.
  const odd = await fetch(`${runtime.url}/ui/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-prefix': '/"><script>' },
    body: JSON.stringify({ name: 'weather' }),
  });
  expect(await odd.text()).toContain(`<script src="${runtime.url}/ui/agent/entrypoint.js"`);
});

test('an agent without UI, an unknown file and a request without a component name are 4xx with a JSON detail', async () => {
  await expect(uiClient().getComponent('nobody', 'weather')).rejects.toThrow(/404/);
  const missingFile = await fetch(`${runtime.url}/ui/agent/secrets.js`);
  expect(missingFile.status).toBe(404);
  expect(await missingFile.json()).toHaveProperty('detail');
  const noName = await fetch(`${runtime.url}/ui/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({}),
  });
  expect(noName.status).toBeGreaterThanOrEqual(400);
  expect(noName.status).toBeLessThan(500);
  expect(await noName.json()).toHaveProperty('detail');
});

test("behind the gateway the component's links point where the client is: its public host, scheme and path prefix", async () => {
  const response = await fetch(`${runtime.url}/ui/agent`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Forwarded-Prefix': '/weather-app',
      'X-Forwarded-Host': 'apps.example.com',
      'X-Forwarded-Proto': 'https',
    },
    body: JSON.stringify({ name: 'weather' }),
  });
  const html = await response.text();
  expect(html).toContain('href="https://apps.example.com/weather-app/ui/agent/entrypoint.css"');
  expect(html).toContain('src="https://apps.example.com/weather-app/ui/agent/entrypoint.js"');
});
