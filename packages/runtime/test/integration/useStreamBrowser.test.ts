/**
 * The `useStream` React hook of `@langchain/langgraph-sdk/react`, as a chat UI uses it, in headless Chromium (Debian's
 * `chromium` driven by playwright-core) against `graphx dev`: the page (test/fixtures/browser/chatPage.tsx) is bundled
 * with esbuild and served on loopback (support/browserChat.ts), which also proxies every other path to the runtime, so the page
 * and the API share one origin (no CORS involved); for the chat app and its Python twin alike.
 */
import type { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { waitFor } from '@graphx/kit/net/ports';
import { messages, send, startBrowserChat, threadOf, waitForPartialAnswer, type BrowserChat } from './support/browserChat';
import { fixtureIn, graphLanguages, RUNTIME_START_MS, type GraphLanguage } from './support/runtimeHarness';

// The callbacks of page.waitForFunction run in the page; the test's TypeScript has no DOM library.
declare const document: any;

const LONG_ANSWER_END = 'the end.';
/** The fixture graph's answer to a message containing "long" (test/fixtures/apps/runtime-chat/src/chat.ts). */
const longAnswer = (text: string) => `ai: You said: ${text}. ${'la '.repeat(20)}${LONG_ANSWER_END}`;

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let chat: BrowserChat;
  let pageUrl: string;
  let browser: Browser;
  let client: Client;

  beforeAll(async () => {
    chat = await startBrowserChat('browser', 'chatPage.tsx', fixtureIn('runtime-chat', language));
    ({ pageUrl, browser, client } = chat);
  }, RUNTIME_START_MS + 30_000);

  afterAll(() => chat?.stop());

  async function openChat(threadId?: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
    await page.goto(threadId ? `${pageUrl}?thread=${threadId}` : pageUrl);
    return page;
  }

  async function waitForIdle(page: Page, timeout = 30_000): Promise<void> {
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'idle', undefined, { timeout });
  }

  async function runStatuses(threadId: string): Promise<string[]> {
    return (await client.runs.list(threadId)).map((run) => run.status).sort();
  }

  /** The thread's run statuses once they are `expected` (a run's end is recorded just after its stream ends). */
  async function eventuallyRunStatuses(threadId: string, expected: string[]): Promise<void> {
    await waitFor(
      `runs ${expected.join(', ')}`,
      async () => JSON.stringify(await runStatuses(threadId)) === JSON.stringify(expected),
      10_000,
      50,
    ).catch(async () => expect(await runStatuses(threadId)).toEqual(expected));
  }

  test('a message sent from the page streams its answer in, and a reload shows the thread from its history', async () => {
    const page = await openChat();
    const historyRequests: string[] = [];
    page.on('request', (request) => request.url().endsWith('/history') && historyRequests.push(request.method()));
    await send(page, 'hello there');
    await waitForPartialAnswer(page, 'You said: hello there.');
    await waitForIdle(page);
    expect(await messages(page)).toEqual(['human: hello there', 'ai: You said: hello there.']);
    expect(await page.textContent('#error')).toBe('');

    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('#messages li').length === 2);
    expect(await messages(page)).toEqual(['human: hello there', 'ai: You said: hello there.']);
    expect(historyRequests).toContain('POST');
    await page.context().close();
  });

  test('a reload during a long answer rejoins the run and shows the answer streaming on to its end', async () => {
    const page = await openChat();
    await send(page, 'tell a long story');
    await page.waitForFunction(() => document.querySelector('#messages li[data-type="ai"]')?.textContent?.includes('la la'));
    const joins: string[] = [];
    page.on('request', (request) => /\/runs\/[0-9a-f-]{36}\/stream/.test(request.url()) && joins.push(request.method()));

    await page.reload();
    await waitForPartialAnswer(page, longAnswer('tell a long story').slice('ai: '.length));
    await waitForIdle(page);
    expect(joins).toEqual(['GET']);
    const shown = await messages(page);
    expect(shown).toEqual(['human: tell a long story', longAnswer('tell a long story')]);
    // Rejoined, not run again.
    expect(await runStatuses(threadOf(page))).toEqual(['success']);
    await page.context().close();
  });

  test('a message sent from a second tab while the thread is busy is queued, then answered after the running one', async () => {
    const first = await openChat();
    await send(first, 'a long one first');
    await waitForPartialAnswer(first, 'You said: a long one first.');
    const threadId = threadOf(first);
    const second = await openChat(threadId);
    await second.waitForFunction(() => document.querySelectorAll('#messages li').length >= 1);
    await send(second, 'then this');

    // The queued run is a pending run of the thread, not a request waiting somewhere.
    await eventuallyRunStatuses(threadId, ['pending', 'running']);
    await second.waitForFunction(
      () => [...document.querySelectorAll('#messages li')].at(-1)?.textContent === 'You said: then this.',
      undefined,
      { timeout: 30_000 },
    );
    await waitForIdle(second);
    await waitForIdle(first);
    await eventuallyRunStatuses(threadId, ['success', 'success']);
    const state = await client.threads.getState<{ messages: Array<{ type: string; content: string }> }>(threadId);
    expect(state.values.messages.map((message) => `${message.type}: ${message.content}`)).toEqual([
      'human: a long one first',
      longAnswer('a long one first'),
      'human: then this',
      'ai: You said: then this.',
    ]);
    await first.context().close();
    await second.context().close();
  });

  test('stop cancels the running run: the answer stops growing and the run is interrupted', async () => {
    const page = await openChat();
    await send(page, 'a long one to stop');
    await page.waitForFunction(() => document.querySelector('#messages li[data-type="ai"]')?.textContent?.includes('la'));
    const threadId = threadOf(page);
    await page.click('#stop');
    await waitForIdle(page);
    await eventuallyRunStatuses(threadId, ['interrupted']);
    const thread = await client.threads.get(threadId);
    expect(thread.status).toBe('idle');
    await page.reload();
    await waitForIdle(page);
    const shown = await messages(page);
    expect(shown.join('\n')).not.toContain(LONG_ANSWER_END);
    await page.context().close();
  });
});
