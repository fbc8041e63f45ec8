/**
 * The new `useStream` of `@langchain/react` (protocol v2, from the npm registry) in headless Chromium (Debian's
 * `chromium` driven by playwright-core) against `graphx dev` on the chat app: first load, submit, streamed tokens, an
 * interrupt and its resume, a reload in the middle of a run that re-attaches, over SSE and over the WebSocket
 * transport, without one 4xx/5xx in the page's network log. The page (test/fixtures/browser/protocolChatPage.tsx) is
 * served from the runtime's origin by a loopback proxy (WebSocket upgrades included), as useStreamBrowser.test.ts does.
 */
import type { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { messages, send, startBrowserChat, threadOf, waitForPartialAnswer, type BrowserChat } from './support/browserChat';

declare const document: any;

let chat: BrowserChat;
let pageUrl: string;
let browser: Browser;
let client: Client;

beforeAll(async () => {
  chat = await startBrowserChat('browserv2', 'protocolChatPage.tsx');
  ({ pageUrl, browser, client } = chat);
});

afterAll(() => chat?.stop());

/** A page with its network log: every answer of 400 or more is noted (the test expects none). */
async function openChat(query: Record<string, string> = {}): Promise<{ page: Page; failures: string[] }> {
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
  await page.goto(`${pageUrl}?${new URLSearchParams(query)}`);
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

const longAnswer = (text: string) => `You said: ${text}. ${'la '.repeat(20)}the end.`;

test.each(['sse', 'websocket'])(
  'over %s: first load, a message whose answer streams in token by token, then an interrupt answered from the page',
  async (transport) => {
    const { page, failures } = await openChat({ transport });
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
    // The run that stopped at the interrupt is recorded interrupted; the resume and the first message succeeded.
    expect((await client.runs.list(threadId)).map((run) => run.status).sort()).toEqual(['interrupted', 'success', 'success']);
    expect(await page.textContent('#error')).toBe('');
    expect(failures).toEqual([]);
    await page.context().close();
  },
);

test('a reload during a long answer re-attaches to the run and shows it streaming on to its end, run once', async () => {
  const { page, failures } = await openChat();
  await send(page, 'tell a long story');
  await page.waitForFunction(
    () => document.querySelector('#messages li[data-type="ai"]')?.textContent?.includes('la la'),
    undefined,
    {
      timeout: 30_000,
    },
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
