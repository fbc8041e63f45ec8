/**
 * A chat page in headless Chromium (Debian's `chromium` driven by playwright-core) against `graphx dev`: the page (a
 * fixture under test/fixtures/browser) is bundled with esbuild and served on loopback by a proxy that passes every
 * other request (SSE and WebSocket upgrades included) to the runtime, so the page and the API share one origin.
 */
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestDatabase, projectRoot, startDevRuntime, type RuntimeProcess } from './runtimeHarness';

// The callbacks of page.waitForFunction run in the page; the test's TypeScript has no DOM library.
declare const document: any;

export interface BrowserChat {
  runtime: RuntimeProcess;
  client: Client;
  browser: Browser;
  pageUrl: string;
  stop: () => Promise<void>;
}

/** Serves the page and its bundle; passes every other request through to the runtime (none: a 404). */
function servePage(bundle: string, runtimeUrl: string | null): http.Server {
  const html = '<!doctype html><html><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>';
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://page').pathname;
    if (req.method === 'GET' && pathname === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    if (req.method === 'GET' && pathname === '/app.js') {
      return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    }
    if (!runtimeUrl) return void res.writeHead(404).end();
    const target = new URL(runtimeUrl);
    const upstream = http.request(
      new URL(req.url ?? '/', runtimeUrl),
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  // WebSocket handshakes go through as bytes: the request head again, then both ways.
  server.on('upgrade', (req, socket, head) => {
    if (!runtimeUrl) return void socket.destroy();
    const target = new URL(runtimeUrl);
    const upstream = net.connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let index = 0; index < req.rawHeaders.length; index += 2)
        lines.push(`${req.rawHeaders[index]}: ${req.rawHeaders[index + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  return server;
}

/** A chat page `fixture` bundled and served on loopback (passing other requests to `proxyTo`, if given), and Chromium. */
export async function openChatPages(
  fixture: string,
  proxyTo: string | null,
): Promise<{ browser: Browser; pageUrl: string; stop: () => Promise<void> }> {
  const built = await esbuild.build({
    entryPoints: [path.join(projectRoot, 'test', 'fixtures', 'browser', fixture)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const pageServer = servePage(built.outputFiles[0]!.text, proxyTo);
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  // Chromium's sandbox needs user namespaces a root process (CI containers run tests as root) is not given.
  const args = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
  return {
    browser,
    pageUrl: `http://127.0.0.1:${(pageServer.address() as { port: number }).port}/`,
    stop: async () => {
      await browser.close();
      pageServer.closeAllConnections();
      await new Promise((resolve) => pageServer.close(resolve));
    },
  };
}

/** The chat app (`runtime-chat` or its twin) under `graphx dev` on a new database, the page `fixture` beside it, and Chromium. */
export async function startBrowserChat(databaseLabel: string, fixture: string, app = 'runtime-chat'): Promise<BrowserChat> {
  const database = await createTestDatabase(databaseLabel);
  const runtime = await startDevRuntime(app, database.url);
  const pages = await openChatPages(fixture, runtime.url);
  return {
    runtime,
    client: new Client({ apiUrl: runtime.url, apiKey: null }),
    browser: pages.browser,
    pageUrl: pages.pageUrl,
    stop: async () => {
      await pages.stop();
      await runtime.stop();
      await database.drop();
    },
  };
}

/** Types `text` into the chat page's draft and sends it. */
export async function send(page: Page, text: string): Promise<void> {
  await page.fill('#draft', text);
  await page.click('#send');
}

/** The chat page's messages as `<type>: <text>`. */
export const messages = (page: Page) =>
  page.$$eval('#messages li', (items: any[]) => items.map((item) => `${item.getAttribute('data-type')}: ${item.textContent}`));

/** The thread the chat page shows (its `thread` query parameter). */
export const threadOf = (page: Page) => new URL(page.url()).searchParams.get('thread')!;

/** Waits until the page shows an AI answer that has begun but not yet ended: proof that it streams in. */
export async function waitForPartialAnswer(page: Page, finalText: string): Promise<void> {
  await page.waitForFunction(
    (final: string) => {
      const answer = [...document.querySelectorAll('#messages li[data-type="ai"]')].at(-1)?.textContent ?? '';
      return answer.length > 0 && answer !== final && final.startsWith(answer);
    },
    finalText,
    { polling: 'raf', timeout: 30_000 },
  );
}

/** Every answer of 400 or more, failed request and page error a page meets (the chat tests expect none). */
export function watchFailures(page: Page): string[] {
  const failures: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => {
    // A stream the page itself closed (a reload, a finished run) is not a failure of the server.
    if (!/ERR_ABORTED/.test(request.failure()?.errorText ?? '')) failures.push(`failed ${request.method()} ${request.url()}`);
  });
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  return failures;
}

/** Waits until the last AI message reads `text` and the page is idle. */
export async function waitForAnswer(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (expected) => [...document.querySelectorAll('#messages li[data-type="ai"]')].at(-1)?.textContent === expected,
    text,
    { timeout: 30_000 },
  );
  await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'idle', undefined, { timeout: 30_000 });
}

/** The chat fixture's answer to a message containing "long" (test/fixtures/apps/runtime-chat/src/chat.ts). */
export const longAnswer = (text: string) => `You said: ${text}. ${'la '.repeat(20)}the end.`;

/**
 * On the protocol-v2 chat page: a message whose answer streams in token by token, then an interrupt answered from
 * the page; the thread holds four messages and three runs (one interrupted) afterwards.
 */
export async function chatThroughAnInterrupt(page: Page, client: Client): Promise<void> {
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
}

/** On the protocol-v2 chat page: a reload during a long answer re-attaches and shows it streaming to its end, run once. */
export async function reloadDuringALongAnswer(page: Page, client: Client): Promise<void> {
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
}
