/**
 * Assistants through the official JS client against `graphx dev`: create, get, update (a new version), versions,
 * set latest, delete, search and count, the graph views (graph, schemas, subgraphs), and runs that take their
 * config and context from a stored assistant.
 */
import { fixtureIn, graphLanguages, type GraphLanguage, devAppForSuite } from './support/runtimeHarness';

// How each library's schema names a list of messages.
const MESSAGE_ITEMS: Record<GraphLanguage, unknown> = {
  javascript: { $ref: expect.stringMatching(/^#\/definitions\/BaseMessage/) },
  python: { oneOf: expect.arrayContaining([{ $ref: '#/$defs/AIMessage' }, { $ref: '#/$defs/HumanMessage' }]) },
};

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const app = devAppForSuite('assistants', fixtureIn('runtime-assistants', language));

  const lastMessage = (values: any) => values.messages.at(-1).content;

  test('an assistant is created, read, updated into new versions, set back to an older version, and deleted', async () => {
    const created = await app.client.assistants.create({
      graphId: 'persona',
      config: { configurable: { persona: 'pirate' } },
      metadata: { team: 'a' },
      name: 'Pirate',
      description: 'talks like a pirate',
    });
    expect(created).toMatchObject({ graph_id: 'persona', name: 'Pirate', version: 1, metadata: { team: 'a' } });
    expect(await app.client.assistants.get(created.assistant_id)).toMatchObject({ description: 'talks like a pirate' });

    const updated = await app.client.assistants.update(created.assistant_id, {
      config: { configurable: { persona: 'knight' } },
      metadata: { tier: 2 },
    });
    expect(updated).toMatchObject({
      version: 2,
      config: { configurable: { persona: 'knight' } },
      metadata: { team: 'a', tier: 2 },
    });
    const versions = await app.client.assistants.getVersions(created.assistant_id);
    expect(versions.map((version) => version.version)).toEqual([2, 1]);
    expect(await app.client.assistants.getVersions(created.assistant_id, { metadata: { tier: 2 } })).toHaveLength(1);

    const back = await app.client.assistants.setLatest(created.assistant_id, 1);
    expect(back).toMatchObject({ version: 1, config: { configurable: { persona: 'pirate' } } });
    expect((await app.client.assistants.update(created.assistant_id, {})).version).toBe(3);
    await expect(app.client.assistants.setLatest(created.assistant_id, 9)).rejects.toThrow('HTTP 404');

    await app.client.assistants.delete(created.assistant_id);
    await expect(app.client.assistants.get(created.assistant_id)).rejects.toThrow('HTTP 404');
    await expect(app.client.assistants.getVersions(created.assistant_id)).rejects.toThrow('HTTP 404');
  });

  test('creating an existing assistant id is a conflict, or returns the existing one with if_exists do_nothing', async () => {
    const assistantId = crypto.randomUUID();
    await app.client.assistants.create({ graphId: 'persona', assistantId, name: 'first' });
    await expect(app.client.assistants.create({ graphId: 'persona', assistantId })).rejects.toThrow('HTTP 409');
    const again = await app.client.assistants.create({ graphId: 'persona', assistantId, name: 'second', ifExists: 'do_nothing' });
    expect(again.name).toBe('first');
  });

  test('a run with a stored assistant uses its config and context, and the run can override one key', async () => {
    const assistant = await app.client.assistants.create({
      graphId: 'persona',
      config: { configurable: { persona: 'pirate' } },
      context: { tone: 'loud' },
    });
    const input = { messages: [{ role: 'user', content: 'hi' }] };
    expect(lastMessage(await app.client.runs.wait(null, assistant.assistant_id, { input }))).toBe('pirate/loud');
    const overridden = await app.client.runs.wait(null, assistant.assistant_id, { input, context: { tone: 'quiet' } });
    expect(lastMessage(overridden)).toBe('pirate/quiet');

    const thread = await app.client.threads.create();
    const run = await app.client.runs.create(thread.thread_id, assistant.assistant_id, { input });
    expect(run.assistant_id).toBe(assistant.assistant_id);
    await app.client.runs.join(thread.thread_id, run.run_id);
    expect(lastMessage((await app.client.threads.getState(thread.thread_id)).values)).toBe('pirate/loud');
  });

  test("the system assistant takes its config and context from LANGGRAPH_CONFIG, as the anchor's do", async () => {
    const system = await app.client.assistants.get('persona');
    expect(system).toMatchObject({ config: { configurable: { persona: 'host' } }, context: { tone: 'calm' } });
    const input = { messages: [{ role: 'user', content: 'hi' }] };
    expect(lastMessage(await app.client.runs.wait(null, 'persona', { input }))).toBe('host/calm');
    const other: any = await app.client.assistants.get('parent');
    expect(other.config).toEqual({});
  });

  test('search filters by graph, name substring and metadata, sorts and pages; count agrees', async () => {
    const tag = crypto.randomUUID();
    for (const name of ['Alpha one', 'Beta two', 'alpha three']) {
      await app.client.assistants.create({ graphId: 'persona', name, metadata: { tag } });
    }
    const byName = await app.client.assistants.search({ metadata: { tag }, name: 'ALPHA', sortBy: 'name', sortOrder: 'asc' });
    expect(byName.map((assistant) => assistant.name)).toEqual(['Alpha one', 'alpha three']);
    const page = await app.client.assistants.search({
      metadata: { tag },
      sortBy: 'created_at',
      sortOrder: 'asc',
      limit: 1,
      offset: 1,
    });
    expect(page.map((assistant) => assistant.name)).toEqual(['Beta two']);
    expect(await app.client.assistants.count({ metadata: { tag } })).toBe(3);
    expect(await app.client.assistants.count({ metadata: { tag }, graphId: 'parent' })).toBe(0);

    const system = await app.client.assistants.search({ metadata: { created_by: 'system' }, limit: 100 });
    expect(system.map((assistant) => assistant.graph_id).sort()).toEqual(['dynamic', 'parent', 'persona', 'typed']);
    const selected = await app.client.assistants.search({ metadata: { tag }, select: ['assistant_id', 'name'] });
    expect(Object.keys(selected[0]!).sort()).toEqual(['assistant_id', 'name']);
  });

  test('a system assistant is found by graph name and cannot be changed through the API', async () => {
    const system = await app.client.assistants.get('persona');
    expect(system).toMatchObject({ graph_id: 'persona', name: 'persona', version: 1, metadata: { created_by: 'system' } });
    await expect(app.client.assistants.update(system.assistant_id, { name: 'mine' })).rejects.toThrow('HTTP 409');
    await expect(app.client.assistants.delete(system.assistant_id)).rejects.toThrow('HTTP 409');
  });

  test('the graph view lists nodes and edges, and xray expands the subgraph', async () => {
    const flat = await app.client.assistants.getGraph('parent');
    expect(flat.nodes.map((node) => node.id)).toEqual(expect.arrayContaining(['__start__', 'plan', 'child', '__end__']));
    expect(flat.edges).toEqual(expect.arrayContaining([expect.objectContaining({ source: 'plan', target: 'child' })]));
    const xray = await app.client.assistants.getGraph('parent', { xray: true });
    expect(xray.nodes.map((node) => node.id)).toEqual(expect.arrayContaining(['child:research', 'child:summarize']));
  });

  test('schemas come from a Zod state, and subgraphs are listed by namespace', async () => {
    const schemas = await app.client.assistants.getSchemas('typed');
    expect(schemas.graph_id).toBe('typed');
    expect(schemas.state_schema).toMatchObject({ type: 'object', properties: { question: { type: 'string' } } });
    expect(schemas.input_schema).toMatchObject({ properties: { question: { type: 'string' } } });

    expect(Object.keys(await app.client.assistants.getSubgraphs('parent'))).toEqual(['child']);
    expect(Object.keys(await app.client.assistants.getSubgraphs('parent', { namespace: 'elsewhere' }))).toEqual([]);
  });

  test("a typed state's schemas, and its subgraphs', name their fields (TypeScript types, Python type hints)", async () => {
    const annotated = await app.client.assistants.getSchemas('persona');
    expect(annotated.state_schema).toMatchObject({
      type: 'object',
      properties: { messages: { type: 'array', items: MESSAGE_ITEMS[language] } },
    });
    if (language === 'javascript') expect(annotated.context_schema).toEqual(annotated.config_schema);
    // Python keeps the two apart: the context schema is the graph's own.
    else expect(annotated.context_schema).toMatchObject({ properties: { tone: { type: 'string' } } });

    const { child } = await app.client.assistants.getSubgraphs('parent');
    expect(child!.state_schema).toMatchObject({
      type: 'object',
      properties: { topic: { type: 'string' }, notes: { type: 'array', items: { type: 'string' } } },
    });
  });

  test('bad assistant input is a 422 naming the field, and an unknown assistant is a 404', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${app.runtime.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unknownGraph = await post('/assistants', { graph_id: 'nope' });
    expect(unknownGraph.status).toBe(422);
    expect(JSON.stringify(await unknownGraph.json())).toContain('graph_id');
    expect((await post('/assistants', { graph_id: 'persona', assistant_id: 'not-a-uuid' })).status).toBe(422);
    expect((await post('/assistants/search', { sort_by: 'password' })).status).toBe(422);
    expect((await post('/assistants/search', { limit: 0 })).status).toBe(422);
    const latest = await post(`/assistants/${crypto.randomUUID()}/latest`, { version: 'two' });
    expect(latest.status).toBe(422);
    expect((await fetch(`${app.runtime.url}/assistants/not-an-assistant`)).status).toBe(404);
    expect((await post('/runs/wait', { assistant_id: crypto.randomUUID(), input: {} })).status).toBe(404);
  });

  test("a thread run by a factory graph's assistant has its state updated as a node only that assistant's graph has", async () => {
    const assistant = await app.client.assistants.create({
      graphId: 'dynamic',
      config: { configurable: { nodeName: 'custom' } },
    });
    const thread = await app.client.threads.create();
    await app.client.runs.wait(thread.thread_id, assistant.assistant_id, {
      input: { messages: [{ role: 'user', content: 'hi' }] },
    });
    await app.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'edited', id: 'edited' }] },
      asNode: 'custom',
    });
    const state: any = await app.client.threads.getState(thread.thread_id);
    expect(state.values.messages.map((message: any) => message.content)).toEqual(['hi', 'custom', 'edited']);
  });

  test('deleting an assistant with deleteThreads removes the threads of that assistant and keeps the others', async () => {
    const assistant = await app.client.assistants.create({ graphId: 'persona' });
    const input = { messages: [{ role: 'user', content: 'hi' }] };
    const ran = await app.client.threads.create();
    await app.client.runs.wait(ran.thread_id, assistant.assistant_id, { input });
    const tagged = await app.client.threads.create({ metadata: { assistant_id: assistant.assistant_id } });
    const other = await app.client.threads.create({ metadata: { assistant_id: crypto.randomUUID() } });

    await app.client.assistants.delete(assistant.assistant_id, { deleteThreads: true });
    await expect(app.client.threads.get(ran.thread_id)).rejects.toThrow('HTTP 404');
    await expect(app.client.threads.get(tagged.thread_id)).rejects.toThrow('HTTP 404');
    expect((await app.client.threads.get(other.thread_id)).thread_id).toBe(other.thread_id);
  });
});
