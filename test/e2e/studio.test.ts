/**
 * The studio of a deployment in a real browser against a real stack (issue 22): cancel, breakpoints, the chat mode,
 * human in the loop, time travel, the custom-auth rule for UI users, and a hostile graph whose markup must stay text.
 * One deployment of test/fixtures/apps/studio-graphs (process runner) serves every test; the tests walk in order.
 * Pages are watched for dialogs, script errors, console errors and failed requests, and checked with axe-core.
 */
import { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { accessibilityViolations, launchChromium, openWatchedPage, screenshot, type PageIncidents } from '../support/chromium';
import {
  ensureConsoleBuild,
  graphNode,
  openStudio as openStudioOf,
  signInToConsole,
  STUDIO_FIXTURE,
  studioApiClient as clientOf,
} from '../support/consolePages';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

let pipeline: PipelineStack;
let browser: Browser;
let page: Page;
let incidents: PageIncidents;
let consoleUrl: string;
let deployment: { id: string; url: string };

beforeAll(async () => {
  ensureConsoleBuild();
  [pipeline, browser] = await Promise.all([startPipelineStack({ env: { GRAPHX_RUNNER: 'process' } }), launchChromium()]);
  const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment('studio', createGitRepo(STUDIO_FIXTURE).url));
  expect(created.status).toBe(201);
  await pipeline.waitForRevision(
    created.body.id,
    created.body.latest_revision_id,
    (status) => status === 'DEPLOYED' || status.endsWith('FAILED'),
  );
  deployment = { id: created.body.id, url: (await pipeline.api('GET', `/v2/deployments/${created.body.id}`)).body.url };
  expect(deployment.url).toBeTruthy();
  consoleUrl = `${pipeline.stack.apiUrl}/console/`;
  ({ page, incidents } = await openWatchedPage(browser));
  await signInToConsole(page, consoleUrl, pipeline.apiKey);
});

afterAll(async () => {
  await browser?.close();
  await pipeline?.stop();
});

afterEach(() => {
  expect(incidents.list).toEqual([]);
});

const openStudio = (assistant: string) => openStudioOf(page, consoleUrl, deployment.id, assistant);
const studioApiClient = (): Client => clientOf(pipeline.stack.apiUrl, deployment.id, pipeline.apiKey);

describe('the studio of a deployment', () => {
  it('cancels a run from the page: the run stops on the server too', async () => {
    await openStudio('research');
    await page.getByLabel('topic').fill('oceans');
    await page.getByLabel('depth').fill('5');
    await page.getByRole('button', { name: 'Run on a new thread' }).click();
    await page.locator('g[data-node="search:query"][data-state="running"]').waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByLabel('Run status').getByText('cancelled').waitFor();
    const threadId = new URL(page.url()).searchParams.get('thread') as string;
    const deadline = Date.now() + 15_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await studioApiClient().runs.list(threadId))[0]?.status ?? '';
      if (status !== 'running' && status !== 'pending') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe('interrupted');
  });

  it('pauses a run before a chosen node and continues it from the page', async () => {
    await page.getByRole('button', { name: 'New thread' }).click();
    await page.getByLabel('topic').fill('lakes');
    await page.getByText('Config, context and breakpoints').click();
    await page.getByRole('group', { name: 'Interrupt before' }).getByLabel('writer').check();
    await page.getByRole('button', { name: 'Run on a new thread' }).click();
    await page.getByRole('heading', { name: 'The thread is paused' }).waitFor({ timeout: 30_000 });
    await page.locator('g[data-node="writer"][data-state="interrupted"]').waitFor();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Run status').getByText('success').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('Run output').innerText()).resolves.toContain('Report on lakes');
  });

  it('chats with a graph whose state has a messages list, through the SDK’s own React hook', async () => {
    await openStudio('chat');
    await page.getByRole('button', { name: 'Chat', exact: true }).click();
    await page.getByLabel('Message', { exact: true }).fill('hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('list', { name: 'Messages' }).getByText('You said: hello there').waitFor({ timeout: 30_000 });
    await screenshot(page, 'studio-chat');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('stops a run at an interrupt, shows it, resumes it from the page, and the thread ends', async () => {
    await openStudio('approval');
    await page.getByLabel('request').fill('launch');
    await page.getByRole('button', { name: 'Run on a new thread' }).click();
    await page.getByLabel('Run status').getByText('interrupted').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('Interrupt value').innerText()).resolves.toContain('Publish this draft?');
    await screenshot(page, 'studio-interrupt');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByLabel('Resume value (JSON or text)').fill('yes');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByLabel('Run status').getByText('success').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('Run output').innerText()).resolves.toContain('Published Draft: launch');
    await page.getByRole('region', { name: 'Interrupt' }).waitFor({ state: 'detached' });
    const threadId = new URL(page.url()).searchParams.get('thread') as string;
    const state = await studioApiClient().threads.getState(threadId);
    expect(state.next).toEqual([]);
    expect((await studioApiClient().threads.get(threadId)).status).toBe('idle');
  });

  it('forks the thread from an earlier checkpoint with edited state, and the new branch runs and shows in the history', async () => {
    // The thread of the previous test: compose → review (interrupt, resumed) → publish.
    await page
      .getByRole('list', { name: 'State history' })
      .getByRole('button', { name: /next: review/ })
      .first()
      .click();
    await page.getByRole('button', { name: 'Edit state and fork' }).click();
    await page.getByLabel('State update (JSON)').fill('{"draft": "Draft: edited"}');
    await page.getByLabel('As node').selectOption('compose');
    await page.getByRole('button', { name: 'Fork with this state' }).click();
    await page
      .getByRole('list', { name: 'State history' })
      .getByText(/branch from/)
      .waitFor();
    await page.getByRole('button', { name: 'Re-run from here' }).click();
    await page.getByLabel('Run status').getByText('interrupted').waitFor({ timeout: 30_000 });
    await page.getByLabel('Resume value (JSON or text)').fill('yes');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByLabel('Run status').getByText('success').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('Run output').innerText()).resolves.toContain('Published Draft: edited');
    await screenshot(page, 'studio-history-fork');
    expect(await accessibilityViolations(page)).toEqual([]);
    const threadId = new URL(page.url()).searchParams.get('thread') as string;
    const history = await studioApiClient().threads.getHistory(threadId, { limit: 50 });
    const outcomes = history.map((state) => (state.values as { outcome?: string }).outcome).filter(Boolean);
    expect(outcomes).toEqual(expect.arrayContaining(['Published Draft: edited', 'Published Draft: launch']));
  });

  it('lets the UI user see every thread (the auth rule gives it an empty filter) while a bearer-token user sees only their own', async () => {
    const asUser = (token: string) =>
      new Client({ apiUrl: deployment.url, apiKey: null, defaultHeaders: { authorization: `Bearer ${token}` } });
    const alice = await asUser('alice-token').threads.create({ metadata: { topic: 'alice thread' } });
    const bob = await asUser('bob-token').threads.create({ metadata: { topic: 'bob thread' } });
    const seenByAlice = (await asUser('alice-token').threads.search({ limit: 100 })).map((thread) => thread.thread_id);
    expect(seenByAlice).toContain(alice.thread_id);
    expect(seenByAlice).not.toContain(bob.thread_id);

    await openStudio('research');
    const threads = page.getByRole('table', { name: 'Threads' });
    await threads.getByText(alice.thread_id.slice(0, 8)).waitFor();
    await threads.getByText(bob.thread_id.slice(0, 8)).waitFor();
    await page.getByLabel('Metadata (JSON)').fill('{"owner": "bob"}');
    await page.getByRole('button', { name: 'Search' }).click();
    // The search result replaces the list: bob's thread only.
    await page.getByRole('table', { name: 'Threads' }).locator('tbody tr').first().waitFor();
    await threads.getByText(bob.thread_id.slice(0, 8)).waitFor();
    await expect(threads.getByText(alice.thread_id.slice(0, 8)).count()).resolves.toBe(0);
    await screenshot(page, 'studio-threads');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('shows a hostile graph’s markup node names, state and logs as text, and none of it runs', async () => {
    await openStudio('hostile');
    const node = graphNode(page, '<img src=x onerror=alert(1)>');
    await node.waitFor();
    await expect(node.locator('title').textContent()).resolves.toBe('<img src=x onerror=alert(1)>');
    await page.getByLabel('text', { exact: true }).fill('<i>hi</i>');
    await page.getByRole('button', { name: 'Run on a new thread' }).click();
    await page.getByLabel('Run status').getByText('success').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('Run output').innerText()).resolves.toContain("<script>alert('state')</script>");
    // Nothing tenant-made became an element.
    expect(await page.locator('#root img, #root script, #root [onerror], #root [onmouseover], #root [onload]').count()).toBe(0);
    await page.goto(`${consoleUrl}deployments/${deployment.id}`);
    await page.getByLabel('App log').getByText('running with <i>hi</i>').waitFor({ timeout: 30_000 });
    expect(await page.locator('#root svg[onload], #root img').count()).toBe(0);
    await screenshot(page, 'studio-hostile');
    expect(await accessibilityViolations(page)).toEqual([]);
  });
});
