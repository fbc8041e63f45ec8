/**
 * Issue 23's browser acceptance on a DEPLOYED app (the runtime tests do the same against `graphx dev`): the chat app
 * (test/fixtures/apps/runtime-chat) is deployed through `POST /v2/deployments` and the real pipeline, and a chat page
 * on its own origin — as a team's front end is — talks to the deployment URL through the gateway with the tenant's
 * `X-Api-Key` (CORS preflights included), in headless Chromium. The new `useStream` of `@langchain/react` (protocol
 * v2 over SSE: the SDK's browser WebSocket transport cannot send an API key) does first load, streamed tokens, an
 * interrupt and its resume, and a reload mid-run that re-attaches, without one 4xx/5xx in the network log; the legacy
 * hook of `@langchain/langgraph-sdk/react` keeps working on the same deployment. The WebSocket transport itself goes
 * through the gateway for clients that can send headers (`ws` from Node, as the SDK's `webSocketFactory` allows), and
 * the app, not the gateway, decides the handshake: without the key it is refused.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import WebSocket from 'ws';
import {
  chatThroughAnInterrupt,
  openChatPages,
  reloadDuringALongAnswer,
  send,
  threadOf,
  waitForPartialAnswer,
  watchFailures,
} from '../../packages/runtime/test/integration/support/browserChat';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

// The callbacks of page.waitForFunction run in the page; the test's TypeScript has no DOM library.
declare const document: any;

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'apps');

let pipeline: PipelineStack;
let deploymentUrl: string;
let client: Client;
const pages: Record<string, { browser: Browser; pageUrl: string; stop: () => Promise<void> }> = {};

beforeAll(async () => {
  pipeline = await startPipelineStack();
  // The chat graph with the dependencies a repository declares (the same as the pipeline's echo fixture's).
  const repo = createGitRepo(path.join(FIXTURES, 'runtime-chat'));
  repo.commit('dependencies', {
    'package.json': fs.readFileSync(path.join(FIXTURES, 'pipeline-echo', 'package.json'), 'utf8'),
    'package-lock.json': fs.readFileSync(path.join(FIXTURES, 'pipeline-echo', 'package-lock.json'), 'utf8'),
  });
  const created = await pipeline.api(
    'POST',
    '/v2/deployments',
    codehostDeployment(`chat-${crypto.randomBytes(3).toString('hex')}`, repo.url),
  );
  expect(created.status).toBe(201);
  const { id, latest_revision_id: revisionId } = created.body;
  const seen = await pipeline.waitForRevision(
    id,
    revisionId,
    (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'),
    240_000,
  );
  expect(seen.at(-1)).toBe('DEPLOYED');
  deploymentUrl = (await pipeline.api('GET', `/v2/deployments/${id}`)).body.url;
  client = new Client({ apiUrl: deploymentUrl, apiKey: pipeline.apiKey });
  pages.protocol = await openChatPages('protocolChatPage.tsx', null);
  pages.legacy = await openChatPages('chatPage.tsx', null);
}, 300_000);

afterAll(async () => {
  for (const opened of Object.values(pages)) await opened.stop();
  await pipeline?.stop();
});

/** The page on its own origin, pointed at the deployment; every answer of 400 or more is noted (none expected). */
async function openChat(kind: 'protocol' | 'legacy'): Promise<{ page: Page; failures: string[] }> {
  const { browser, pageUrl } = pages[kind]!;
  const page = await (await browser.newContext()).newPage();
  const failures = watchFailures(page);
  await page.goto(`${pageUrl}?${new URLSearchParams({ api: deploymentUrl, key: pipeline.apiKey })}`);
  return { page, failures };
}

test('new useStream on a deployed app, from another origin: streamed tokens, an interrupt and its resume, no 4xx/5xx', async () => {
  const { page, failures } = await openChat('protocol');
  await chatThroughAnInterrupt(page, client);
  expect(failures).toEqual([]);
  await page.context().close();
});

test('new useStream on a deployed app: a reload during a long answer re-attaches and streams on to its end, run once', async () => {
  const { page, failures } = await openChat('protocol');
  await reloadDuringALongAnswer(page, client);
  expect(failures).toEqual([]);
  await page.context().close();
});

test('the legacy useStream keeps working on the same deployment: a message streams in and is kept on the thread', async () => {
  const { page, failures } = await openChat('legacy');
  await send(page, 'hi legacy');
  await waitForPartialAnswer(page, 'You said: hi legacy.');
  await page.waitForFunction(
    () => [...document.querySelectorAll('#messages li[data-type="ai"]')].at(-1)?.textContent === 'You said: hi legacy.',
    undefined,
    { timeout: 30_000 },
  );
  const threadId = threadOf(page);
  const state = await client.threads.getState<{ messages: Array<{ content: unknown }> }>(threadId);
  expect(state.values.messages.map((message) => message.content)).toEqual(['hi legacy', 'You said: hi legacy.']);
  expect(failures).toEqual([]);
  await page.context().close();
});

/** A WebSocket on the deployment's protocol-v2 event stream, with the messages it received so far. */
async function openEventSocket(threadId: string, headers: Record<string, string>) {
  const socket = new WebSocket(`${deploymentUrl.replace(/^http/, 'ws')}/threads/${threadId}/stream/events`, { headers });
  const received: any[] = [];
  socket.on('message', (data) => received.push(JSON.parse(String(data))));
  const opened = await new Promise<{ ok: true } | { ok: false; status: number }>((resolve) => {
    socket.once('open', () => resolve({ ok: true }));
    socket.once('unexpected-response', (_request, response) => resolve({ ok: false, status: response.statusCode ?? 0 }));
    socket.once('error', () => resolve({ ok: false, status: 0 }));
  });
  const next = async (predicate: (message: any) => boolean) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = received.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out; received ${JSON.stringify(received.slice(-5))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { socket, opened, next, received };
}

test('protocol v2 over a WebSocket through the deployment URL: subscribe, run.start, streamed messages; no key, no socket', async () => {
  const threadId = crypto.randomUUID();
  const refused = await openEventSocket(threadId, {});
  expect(refused.opened).toEqual({ ok: false, status: 401 });

  const { socket, opened, next, received } = await openEventSocket(threadId, { 'X-Api-Key': pipeline.apiKey });
  expect(opened).toEqual({ ok: true });
  socket.send(JSON.stringify({ id: 1, method: 'subscription.subscribe', params: { channels: ['messages', 'lifecycle'] } }));
  expect(await next((message) => message.id === 1)).toMatchObject({ type: 'success', id: 1 });
  socket.send(
    JSON.stringify({
      id: 2,
      method: 'run.start',
      params: { assistant_id: 'chat', input: { messages: [{ role: 'user', content: 'over the gateway' }] } },
    }),
  );
  expect(await next((message) => message.id === 2)).toMatchObject({ type: 'success', result: { run_id: expect.any(String) } });
  await next(
    (message) =>
      message.method === 'lifecycle' && message.params?.namespace?.length === 0 && message.params.data?.event === 'completed',
  );
  // The answer arrived as message events on the socket, token by token (more than one event).
  expect(received.filter((message) => message.method === 'messages').length).toBeGreaterThan(1);
  socket.close();
  const state = await client.threads.getState<{ messages: Array<{ content: unknown }> }>(threadId);
  const text = (content: unknown) =>
    typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((block) => block.text ?? '').join('');
  expect(state.values.messages.map((message) => text(message.content))).toEqual([
    'over the gateway',
    'You said: over the gateway.',
  ]);
});
