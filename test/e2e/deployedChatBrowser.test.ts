/**
 * Issue 23's browser acceptance on a DEPLOYED app (the runtime tests do the same against `graphx dev`): the chat app
 * (test/fixtures/apps/runtime-chat) is deployed through `POST /v2/deployments` and the real pipeline, and a chat page
 * on its own origin — as a team's front end is — talks to the deployment URL through the gateway with the tenant's
 * `X-Api-Key` (CORS preflights included), in headless Chromium. The new `useStream` of `@langchain/react` (protocol
 * v2 over SSE: the SDK's browser WebSocket transport cannot send an API key) does first load, streamed tokens, an
 * interrupt and its resume, and a reload mid-run that re-attaches, without one 4xx/5xx in the network log; the legacy
 * hook of `@langchain/langgraph-sdk/react` keeps working on the same deployment.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import {
  messages,
  openChatPages,
  send,
  threadOf,
  waitForPartialAnswer,
} from '../../packages/runtime/test/integration/support/browserChat';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

// The callbacks of page.waitForFunction run in the page; the test's TypeScript has no DOM library.
declare const document: any;

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'apps');
const longAnswer = (text: string) => `You said: ${text}. ${'la '.repeat(20)}the end.`;

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
  const failures: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => {
    // A stream the page itself closed (a reload, a finished run) is not a failure of the server.
    if (!/ERR_ABORTED/.test(request.failure()?.errorText ?? '')) failures.push(`failed ${request.method()} ${request.url()}`);
  });
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  await page.goto(`${pageUrl}?${new URLSearchParams({ api: deploymentUrl, key: pipeline.apiKey })}`);
  return { page, failures };
}

async function waitForAnswer(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (expected) => [...document.querySelectorAll('#messages li[data-type="ai"]')].at(-1)?.textContent === expected,
    text,
    { timeout: 30_000 },
  );
  await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'idle', undefined, { timeout: 30_000 });
}

test('new useStream on a deployed app, from another origin: streamed tokens, an interrupt and its resume, no 4xx/5xx', async () => {
  const { page, failures } = await openChat('protocol');
  await send(page, 'hello there');
  await waitForPartialAnswer(page, 'You said: hello there.');
  await waitForAnswer(page, 'You said: hello there.');
  expect(await messages(page)).toEqual(['human: hello there', 'ai: You said: hello there.']);

  await send(page, 'ask me something');
  await page.waitForFunction(() => document.querySelector('#question')?.textContent === 'Which colour?', undefined, {
    timeout: 30_000,
  });
  await send(page, 'blue');
  await waitForAnswer(page, 'You chose blue.');
  const threadId = threadOf(page);
  const state = await client.threads.getState<{ messages: Array<{ content: unknown }> }>(threadId);
  expect(state.values.messages).toHaveLength(4);
  expect((await client.runs.list(threadId)).map((run) => run.status).sort()).toEqual(['interrupted', 'success', 'success']);
  expect(await page.textContent('#error')).toBe('');
  expect(failures).toEqual([]);
  await page.context().close();
});

test('new useStream on a deployed app: a reload during a long answer re-attaches and streams on to its end, run once', async () => {
  const { page, failures } = await openChat('protocol');
  await send(page, 'tell a long story');
  await page.waitForFunction(
    () => document.querySelector('#messages li[data-type="ai"]')?.textContent?.includes('la la'),
    undefined,
    { timeout: 30_000 },
  );
  const threadId = threadOf(page);
  await page.reload();
  await waitForPartialAnswer(page, longAnswer('tell a long story'));
  await waitForAnswer(page, longAnswer('tell a long story'));
  expect(await messages(page)).toEqual(['human: tell a long story', `ai: ${longAnswer('tell a long story')}`]);
  expect((await client.runs.list(threadId)).map((run) => run.status)).toEqual(['success']);
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
