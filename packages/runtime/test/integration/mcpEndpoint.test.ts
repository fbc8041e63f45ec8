/**
 * `/mcp` on `graphx dev` (in each graph language) through the MCP SDK's own client (`StreamableHTTPClientTransport`):
 * the deployment's assistants are tools, calling one runs the graph; custom auth applies as on every route (the app's
 * bearer tokens; the whoami graph answers with the user the run received).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { devAppForSuite, fixtureIn, graphLanguages, type GraphLanguage } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const openClients: Client[] = [];
  // Declared before the app's hooks: jest runs afterAll hooks in order, and the clients close before the runtime stops.
  afterAll(async () => {
    await Promise.all(openClients.map((client) => client.close()));
  });
  const app = devAppForSuite('mcp', fixtureIn('runtime-auth', language));
  let runtime: { url: string };

  beforeAll(() => {
    runtime = app.runtime;
  });

  async function connect(token: string | null): Promise<Client> {
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const transport = new StreamableHTTPClientTransport(new URL(`${runtime.url}/mcp`), { requestInit: { headers } });
    const client = new Client({ name: 'graphx-test', version: '1.0.0' });
    await client.connect(transport);
    openClients.push(client);
    return client;
  }

  test('an MCP client lists the assistants (graphx.json and created ones) as tools and a tool call answers with the graph run as the caller', async () => {
    const created = await fetch(`${runtime.url}/assistants`, {
      method: 'POST',
      headers: { authorization: 'Bearer user1-token', 'content-type': 'application/json' },
      body: JSON.stringify({ graph_id: 'agent', name: 'my helper', description: 'Says who you are.' }),
    });
    expect(created.status).toBe(200);
    const client = await connect('user1-token');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.description])).toEqual([
      ['agent', expect.any(String)],
      ['my_helper', 'Says who you are.'],
    ]);
    expect(tools[0]!.inputSchema).toMatchObject({ type: 'object', properties: { messages: expect.anything() } });

    const result = await client.callTool({ name: 'agent', arguments: { messages: [{ role: 'user', content: 'hi' }] } });
    expect(result.isError).toBe(false);
    const values = JSON.parse((result.content as Array<{ type: string; text: string }>)[0]!.text);
    expect(values.messages.map((message: { type: string }) => message.type)).toEqual(['human', 'ai']);
    expect(JSON.parse(values.messages[1].content)).toMatchObject({ identity: 'user1', user_id: 'user1' });
    expect(result.structuredContent).toEqual(values);
  });

  test('without a valid token the MCP endpoint is a 401 with the auth handler detail, and the client cannot connect', async () => {
    const response = await fetch(`${runtime.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: 'Invalid token' });
    await expect(connect('wrong-token')).rejects.toThrow(/Invalid token/);
  });

  test('a body that is no JSON-RPC message is a 422 and a wrong Accept a 406, with detail; GET is 405; an unknown tool is a protocol error', async () => {
    const headers = { authorization: 'Bearer user1-token', accept: 'application/json, text/event-stream' };
    for (const body of ['42', '"tools/list"', '[]', '{}', '{"jsonrpc":"1.0","method":"tools/list","id":1}']) {
      const response = await fetch(`${runtime.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { detail?: unknown }).detail).toBeDefined();
    }
    const noAccept = await fetch(`${runtime.url}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer user1-token', 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(noAccept.status).toBe(406);
    expect(((await noAccept.json()) as { detail: string }).detail).toMatch(/Accept/);
    const get = await fetch(`${runtime.url}/mcp`, { headers });
    expect(get.status).toBe(405);
    expect(((await get.json()) as { detail: string }).detail).toMatch(/stateless/);

    const client = await connect('user2-token');
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Tool nope not found/);
  });
});
