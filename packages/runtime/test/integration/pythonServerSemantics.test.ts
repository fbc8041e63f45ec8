/**
 * Where LangChain's JS dev server and its Python Agent Server answer differently, graphx answers as the Python server
 * (CONTRACT §9, docs/internal-contracts.md "Python-server semantics"): `/info`'s shape, `/ok?check_db`, durability,
 * bulk cancel's `?action=`, and `/runs/wait` queued behind a long run without a time cap. `graphx dev` on the echo
 * app over loopback; the defaults (enqueue, on_disconnect continue, Location) are in agentServerApi.test.ts.
 */
import { waitFor } from '@graphx/kit/net/ports';
import { fixtureIn, graphLanguages, type GraphLanguage, devAppForSuite } from './support/runtimeHarness';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const hi = { messages: [{ role: 'user', content: 'hi' }] };
  // A short enqueue wait: a queued /runs/wait must not depend on it (the Python server queues without a bound).
  // Thread TTLs are swept often here, so a TTL of a second shows within the test.
  const app = devAppForSuite('pysem', fixtureIn('runtime-echo', language), {
    GRAPHX_RUNTIME_ENQUEUE_WAIT_MS: '1000',
    GRAPHX_RUNTIME_TTL_SWEEP_MS: '200',
  });

  const post = (path: string, body: unknown) =>
    fetch(`${app.runtime.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('/info has the Python server shape: version, langgraph_py_version, flags, host and metadata', async () => {
    const info = (await (await fetch(`${app.runtime.url}/info`)).json()) as Record<string, any>;
    // Each langgraph version is that of the graphs' own language; the other is null.
    const semver = expect.stringMatching(/^\d+\.\d+\.\d+/);
    expect(info).toMatchObject({
      version: expect.any(String),
      langgraph_py_version: language === 'python' ? semver : null,
      langgraph_js_version: language === 'python' ? null : semver,
      context: language === 'python' ? 'python' : 'js',
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
      host: { kind: 'self-hosted', revision_id: null, tenant_id: null },
      metadata: {},
    });
    expect(Object.keys(info)).toEqual(expect.arrayContaining(['version', 'langgraph_py_version', 'flags', 'host', 'metadata']));
  });

  test('durability exit writes the run checkpoints only at its end; async (the default) after every step', async () => {
    const historyLength = async (durability: string | undefined) => {
      const thread = await app.client.threads.create();
      const response = await post(`/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: 'agent',
        input: hi,
        ...(durability ? { durability } : {}),
      });
      expect(response.status).toBe(200);
      return (await app.client.threads.getHistory(thread.thread_id, { limit: 50 })).length;
    };
    const stepwise = await historyLength(undefined);
    const atExit = await historyLength('exit');
    // input, agent, tools (+ the empty first one) step by step; only the last one with `exit`.
    expect(stepwise).toBeGreaterThanOrEqual(3);
    expect(atExit).toBe(1);
    expect(await historyLength('sync')).toBe(stepwise);
    const legacy = await post('/runs/wait', { assistant_id: 'agent', input: hi, checkpoint_during: 'sometimes' });
    expect(legacy.status).toBe(422);
  });

  test('POST /runs/cancel?action=rollback (the Python SDK form) rolls back: the run and its checkpoints are gone', async () => {
    const thread = await app.client.threads.create();
    const run = await app.client.runs.create(thread.thread_id, 'slow', { input: hi });
    await waitFor(
      'the run to start',
      async () => (await app.client.runs.get(thread.thread_id, run.run_id)).status === 'running',
      10_000,
      50,
    );
    const cancelled = await post('/runs/cancel?action=rollback', { thread_id: thread.thread_id, run_ids: [run.run_id] });
    expect(cancelled.status).toBe(204);
    await waitFor(
      'the run to be rolled back',
      async () => (await fetch(`${app.runtime.url}/threads/${thread.thread_id}/runs/${run.run_id}`)).status === 404,
      10_000,
      50,
    );
    expect((await app.client.threads.get(thread.thread_id)).status).toBe('idle');
    const bad = await post('/runs/cancel?action=explode', { thread_id: thread.thread_id, run_ids: [run.run_id] });
    expect(bad.status).toBe(422);
  });

  test('/runs/wait queued behind a run longer than the enqueue wait still answers with its values', async () => {
    const thread = await app.client.threads.create();
    const first = post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'slow', input: hi });
    await waitFor(
      'the thread to be busy',
      async () => (await app.client.threads.get(thread.thread_id)).status === 'busy',
      5_000,
      20,
    );
    // The slow run takes 3 s, three times the runtime's enqueue wait here.
    const second = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'queued' }] },
      multitask_strategy: 'enqueue',
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('content-location')).toMatch(new RegExp(`^/threads/${thread.thread_id}/runs/`));
    const values = (await second.json()) as { messages: Array<{ content: string }> };
    expect(values.messages.map((message) => message.content)).toEqual(['hi', 'done', 'queued', 'echo: queued', 'ok']);
    expect((await first).status).toBe(200);
  });

  test('GET /threads/{id}/storage counts the bytes of the checkpoints, per channel, and the writes; they grow with a run', async () => {
    const thread = await app.client.threads.create();
    const storage = async () => (await (await fetch(`${app.runtime.url}/threads/${thread.thread_id}/storage`)).json()) as any;
    const empty = await storage();
    expect(empty).toEqual({
      thread_id: thread.thread_id,
      checkpoints: { count: 0, bytes: 0 },
      channel_values: { bytes: 0, channels: {} },
      pending_writes: { count: 0, bytes: 0 },
      total_bytes: 0,
    });
    await post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'agent', input: hi });
    const used = await storage();
    expect(used.checkpoints.count).toBeGreaterThanOrEqual(3);
    expect(used.channel_values.channels.messages).toBeGreaterThan(0);
    expect(used.total_bytes).toBe(used.checkpoints.bytes + used.channel_values.bytes + used.pending_writes.bytes);
    expect((await fetch(`${app.runtime.url}/threads/00000000-0000-4000-8000-000000000000/storage`)).status).toBe(404);
  });

  test('thread TTLs: delete removes the thread once its minutes pass after its last run; keep_latest keeps only the newest checkpoint', async () => {
    const ttl = { strategy: 'delete', ttl: 1.5 / 60 }; // 1.5 s
    const created = await post('/threads', { ttl });
    const thread = (await created.json()) as { thread_id: string };
    const shown = (await (await fetch(`${app.runtime.url}/threads/${thread.thread_id}?include=ttl`)).json()) as any;
    expect(shown.ttl).toEqual({ strategy: 'delete', ttl_minutes: ttl.ttl, expires_at: expect.any(String) });
    // A run pushes the expiry back: the thread outlives its first deadline.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'agent', input: hi });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await fetch(`${app.runtime.url}/threads/${thread.thread_id}`)).status).toBe(200);
    await waitFor(
      'the thread to expire',
      async () => (await fetch(`${app.runtime.url}/threads/${thread.thread_id}`)).status === 404,
      10_000,
      100,
    );

    const kept = await app.client.threads.create();
    await post(`/threads/${kept.thread_id}/runs/wait`, { assistant_id: 'agent', input: hi });
    expect((await app.client.threads.getHistory(kept.thread_id, { limit: 50 })).length).toBeGreaterThan(1);
    // A ttl-only PATCH (the Python server's) sets it on an existing thread.
    const patched = await fetch(`${app.runtime.url}/threads/${kept.thread_id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ttl: { strategy: 'keep_latest', ttl: 0.5 / 60 } }),
    });
    expect(patched.status).toBe(200);
    await waitFor(
      'the old checkpoints to be pruned',
      async () => (await app.client.threads.getHistory(kept.thread_id, { limit: 50 })).length === 1,
      10_000,
      100,
    );
    expect((await app.client.threads.getState<{ messages: unknown[] }>(kept.thread_id)).values.messages).toHaveLength(3);
    expect((await post('/threads', { ttl: { ttl: -1 } })).status).toBe(422);
  });

  test('the agent server describes itself: /openapi.json names every route it answers, /docs renders it', async () => {
    const document = (await (await fetch(`${app.runtime.url}/openapi.json`)).json()) as any;
    expect(document.openapi).toBe('3.1.0');
    for (const [path, method] of [
      ['/threads/{threadId}/stream/events', 'post'],
      ['/threads/{threadId}/commands', 'post'],
      ['/threads/{threadId}/storage', 'get'],
      ['/a2a/{assistantId}', 'post'],
      ['/runs/stream', 'post'],
    ]) {
      expect(document.paths[path!][method!]).toMatchObject({ operationId: expect.any(String), tags: [expect.any(String)] });
    }
    expect(document.paths['/threads/{threadId}/runs/{runId}'].get.parameters.map((p: any) => p.name)).toEqual([
      'threadId',
      'runId',
    ]);
    const page = await fetch(`${app.runtime.url}/docs`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('/docs/assets/swagger-ui-bundle.js');
    expect((await fetch(`${app.runtime.url}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
    expect((await fetch(`${app.runtime.url}/docs/assets/../../package.json`)).status).toBe(404);
  });

  test('a stateless run with on_completion keep leaves its thread, with the run and its state; delete (the default) leaves none', async () => {
    const before = await app.client.threads.count();
    const kept = await post('/runs/wait', { assistant_id: 'agent', input: hi, on_completion: 'keep' });
    expect(kept.status).toBe(200);
    const location = kept.headers.get('content-location')!;
    const [, threadId] = location.match(/^\/threads\/([0-9a-f-]{36})\/runs\/[0-9a-f-]{36}$/)!;
    expect((await app.client.threads.getState<{ messages: unknown[] }>(threadId!)).values.messages).toHaveLength(3);
    expect((await app.client.runs.list(threadId!)).map((run) => run.status)).toEqual(['success']);
    await post('/runs/wait', { assistant_id: 'agent', input: hi });
    expect(await app.client.threads.count()).toBe(before + 1);
  });

  test('/ok?check_db=1 answers 503 with detail once the database is gone, while /ok stays 200', async () => {
    expect((await fetch(`${app.runtime.url}/ok?check_db=1`)).status).toBe(200);
    await app.database.drop();
    const checked = await fetch(`${app.runtime.url}/ok?check_db=1`);
    expect(checked.status).toBe(503);
    expect(((await checked.json()) as { detail: string }).detail).toMatch(/database/);
    expect((await fetch(`${app.runtime.url}/ok`)).status).toBe(200);
  });
});
