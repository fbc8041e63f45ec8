/**
 * The studio under `graphx dev` (/studio/) in a real browser: the address graphx dev prints carries its studio token,
 * the page keeps it for the tab and drops it from the address bar, draws and runs the app's graph on the app's own
 * origin, and the app's custom auth sees a debugging-UI user (empty filter: every thread). Without the token a
 * request marked as the studio's is refused.
 */
import { Client } from '@langchain/langgraph-sdk';
import type { Browser } from 'playwright-core';
import { launchChromium, openWatchedPage, screenshot } from '../../../../test/support/chromium';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

const { ensureConsoleBuilt } = require('../../../../scripts/build-console.js') as {
  ensureConsoleBuilt: () => { dir: string | null };
};

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;
let browser: Browser;
let studioUrl: string;

beforeAll(async () => {
  expect(ensureConsoleBuilt().dir).toBeTruthy();
  database = await createTestDatabase('devstudio');
  [runtime, browser] = await Promise.all([startDevRuntime('studio-graphs', database.url), launchChromium()]);
  studioUrl = /studio at (\S+)/.exec(runtime.output())?.[1] as string;
});

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await database?.drop();
});

describe('the studio of graphx dev', () => {
  it('prints a studio address whose token admits the page as a UI user: it draws and runs the graph and lists every user’s threads', async () => {
    expect(studioUrl).toMatch(new RegExp(`^${runtime.url}/studio/#token=[A-Za-z0-9_-]{32}$`));
    const bob = await new Client({
      apiUrl: runtime.url,
      apiKey: null,
      defaultHeaders: { authorization: 'Bearer bob-token' },
    }).threads.create();
    const { page, incidents } = await openWatchedPage(browser);
    await page.goto(studioUrl);
    await page.getByLabel('Assistant').selectOption({ label: 'research' });
    await page.locator('g[data-node="search:summarize"]').waitFor();
    // The token stays in the tab, not in the address bar (nor in any request line: fragments are not sent).
    expect(page.url()).not.toContain('token=');
    await page.getByRole('table', { name: 'Threads' }).getByText(bob.thread_id.slice(0, 8)).waitFor();
    await page.getByLabel('topic').fill('rivers');
    await page.getByRole('button', { name: 'Run on a new thread' }).click();
    await page.locator('g[data-node="writer"][data-state="done"]').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('Run output').innerText()).resolves.toContain('Report on rivers');
    await screenshot(page, 'dev-studio');
    expect(incidents.list).toEqual([]);

    const page2 = await fetch(`${runtime.url}/studio/`);
    expect(page2.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page2.text()).toContain('<meta name="graphx:mode" content="studio">');
  });

  it('refuses a request marked as the studio’s without the studio token', async () => {
    const answer = await fetch(`${runtime.url}/threads/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-scheme': 'graphx-studio', 'x-api-key': 'guessed' },
      body: '{}',
    });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toEqual({ detail: 'A debugging-UI request needs the studio token graphx dev printed.' });
  });
});
