/**
 * The new `useStream` of `@langchain/react` (protocol v2, from the npm registry) in headless Chromium (Debian's
 * `chromium` driven by playwright-core) against `graphx dev` on the chat app: first load, submit, streamed tokens, an
 * interrupt and its resume, a reload in the middle of a run that re-attaches, over SSE and over the WebSocket
 * transport, without one 4xx/5xx in the page's network log; for the chat app and its Python twin alike. The page (test/fixtures/browser/protocolChatPage.tsx) is
 * served from the runtime's origin by a loopback proxy (WebSocket upgrades included), as useStreamBrowser.test.ts does.
 */
import type { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { fixtureIn, graphLanguages, RUNTIME_START_MS, type GraphLanguage } from './support/runtimeHarness';
import {
  chatThroughAnInterrupt,
  reloadDuringALongAnswer,
  startBrowserChat,
  watchFailures,
  type BrowserChat,
} from './support/browserChat';

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let chat: BrowserChat;
  let pageUrl: string;
  let browser: Browser;
  let client: Client;

  beforeAll(async () => {
    chat = await startBrowserChat('browserv2', 'protocolChatPage.tsx', fixtureIn('runtime-chat', language));
    ({ pageUrl, browser, client } = chat);
  }, RUNTIME_START_MS + 30_000);

  afterAll(() => chat?.stop());

  /** A page with its network log: every answer of 400 or more is noted (the test expects none). */
  async function openChat(query: Record<string, string> = {}): Promise<{ page: Page; failures: string[] }> {
    const page = await (await browser.newContext()).newPage();
    const failures = watchFailures(page);
    await page.goto(`${pageUrl}?${new URLSearchParams(query)}`);
    return { page, failures };
  }

  test.each(['sse', 'websocket'])(
    'over %s: first load, a message whose answer streams in token by token, then an interrupt answered from the page',
    async (transport) => {
      const { page, failures } = await openChat({ transport });
      await chatThroughAnInterrupt(page, client);
      expect(failures).toEqual([]);
      await page.context().close();
    },
  );

  test('a reload during a long answer re-attaches to the run and shows it streaming on to its end, run once', async () => {
    const { page, failures } = await openChat();
    await reloadDuringALongAnswer(page, client);
    expect(failures).toEqual([]);
    await page.context().close();
  });
});
