/**
 * Issue 22's acceptance in a real browser (Debian's chromium driven by playwright-core) against a real stack
 * (Temporal dev server, PostgreSQL, git, the process runner behind the gateway): the console signs in with an API
 * key, creates a deployment from a `file://` repository through its form, follows the revision to DEPLOYED with its
 * build log streaming, retries a failed revision; then the studio drives the deployed graphs (the fixture
 * test/fixtures/apps/studio-graphs: a subgraph, an interrupt, a chat, a hostile graph, custom auth). The tests walk
 * one flow in order and share the deployment the form creates. Every page is watched for dialogs, script errors and
 * console errors, checked with axe-core, and photographed into .test-data/screenshots/.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { Client } from '@langchain/langgraph-sdk';
import { accessibilityViolations, launchChromium, openWatchedPage, screenshot, type PageIncidents } from '../support/chromium';
import { startPipelineStack, type PipelineStack } from '../support/pipelineStack';
import { testEnv } from '../support/env';

const { ensureConsoleBuilt } = require('../../scripts/build-console.js') as { ensureConsoleBuilt: () => { dir: string | null } };

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'studio-graphs');
const BUILD_MARKUP = `<img src=x onerror=alert('build')>`;
const SECRET_VALUE = `s3cret-${crypto.randomBytes(6).toString('hex')}`;

let pipeline: PipelineStack;
let repo: GitRepo;
let browser: Browser;
let page: Page;
let incidents: PageIncidents;
let consoleUrl: string;
/** The deployment the form creates; the studio tests use it. */
let deployment: { id: string; url: string };

beforeAll(async () => {
  expect(ensureConsoleBuilt().dir).toBeTruthy();
  [pipeline, browser] = await Promise.all([startPipelineStack({ env: { GRAPHX_RUNNER: 'process' } }), launchChromium()]);
  repo = createGitRepo(FIXTURE);
  consoleUrl = `${pipeline.stack.apiUrl}/console/`;
  ({ page, incidents } = await openWatchedPage(browser));
});

afterAll(async () => {
  await browser?.close();
  await pipeline?.stop();
});

afterEach(() => {
  // Nothing a page showed may have run as script, opened a dialog or broken the page.
  expect(incidents.list).toEqual([]);
});

/** The revision page's status badge text. */
const revisionStatus = (target: Page) => target.getByLabel('Revision status').innerText();

describe('the console', () => {
  it('shows nothing but the sign-in form without a key, refuses a wrong key, and signs in with a valid one', async () => {
    await page.goto(consoleUrl);
    await expect(page.getByRole('heading', { name: 'Deployments' }).count()).resolves.toBe(0);
    await page.getByLabel('API key').fill('not-a-key-of-anyone');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The control plane refused this API key.').waitFor();
    await screenshot(page, 'console-sign-in');
    // The refused request is the browser's own network log line, expected here and nowhere else.
    expect(incidents.list).toEqual(['HTTP 401 GET /v2/deployments']);
    incidents.list.length = 0;
    expect(await accessibilityViolations(page)).toEqual([]);
    // By keyboard alone: the key field has the focus, Enter submits.
    await page.getByLabel('API key').fill('');
    await page.keyboard.type(pipeline.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    // The first Tab reaches the skip link, the next ones the header's links.
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).resolves.toBe('Skip to content');
    // The key is the tab's: sessionStorage, never a cookie.
    expect(await page.context().cookies()).toEqual([]);
  });

  it('creates a deployment from a file:// repository through the form and follows its revision to DEPLOYED while the build log streams', async () => {
    const name = `console-${crypto.randomBytes(3).toString('hex')}`;
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Repository URL').fill(repo.url);
    // The build prints markup: the log must show it as text.
    await page.getByLabel('Build command (optional)').fill(`echo "${BUILD_MARKUP}"; sleep 2; echo built`);
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByLabel('Name', { exact: true }).nth(1).fill('GREETING');
    await page.getByLabel('Value').fill(SECRET_VALUE);
    await screenshot(page, 'console-deployment-form');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create deployment' }).click();

    await page.getByRole('heading', { name }).waitFor();
    await expect(page.getByLabel('Secret names').innerText()).resolves.toContain('GREETING');
    expect(await page.content()).not.toContain(SECRET_VALUE);
    await page.getByRole('table', { name: 'Revisions' }).getByRole('link').first().click();

    // Sample the page while the pipeline runs: the log must grow before the revision is DEPLOYED.
    const samples: Array<{ status: string; lines: number }> = [];
    const deadline = Date.now() + 240_000;
    for (;;) {
      const status = await revisionStatus(page);
      const lines = await page.getByLabel('Build log').locator('.log-line').count();
      samples.push({ status, lines });
      if (status === 'DEPLOYED' || status.endsWith('FAILED') || Date.now() > deadline) break;
      await page.waitForTimeout(250);
    }
    expect(samples[samples.length - 1]?.status).toBe('DEPLOYED');
    expect(samples.some((sample) => sample.status !== 'DEPLOYED' && sample.lines > 0)).toBe(true);
    await expect(page.getByLabel('Build log').innerText()).resolves.toContain(BUILD_MARKUP);
    await screenshot(page, 'console-revision');
    expect(await accessibilityViolations(page)).toEqual([]);

    const id = /deployments\/([0-9a-f-]{36})\/revisions/.exec(page.url())?.[1] as string;
    deployment = { id, url: (await pipeline.api('GET', `/v2/deployments/${id}`)).body.url };
    await page.getByRole('link', { name: '← Deployment' }).click();
    await page.getByRole('link', { name: 'Open studio' }).waitFor();
    // The app's own output, markup included, shows as text.
    await page.getByLabel('App log').getByText('hostile app loaded').waitFor({ timeout: 30_000 });
    await expect(page.getByLabel('App log').innerText()).resolves.toContain(`<script>alert('log')</script>`);
    await screenshot(page, 'console-deployment');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Deployments' }).first().click();
    await page.getByRole('table', { name: 'Deployments' }).getByRole('link', { name }).waitFor();
    await screenshot(page, 'console-deployments');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('retries a failed revision from its page, and the same revision reaches DEPLOYED', async () => {
    const flag = path.join(testEnv.runDir(), `console-flag-${crypto.randomBytes(4).toString('hex')}`);
    const created = await pipeline.api('POST', '/v2/deployments', {
      name: `console-retry-${crypto.randomBytes(3).toString('hex')}`,
      source: 'codehost',
      source_config: { repo_url: repo.url, build_command: `test -f ${flag} || { echo "flag file is missing"; exit 3; }` },
      source_revision_config: { repo_ref: 'main', graphx_config_path: 'graphx.json' },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const { id, latest_revision_id: revisionId } = created.body;
    await page.goto(`${consoleUrl}deployments/${id}/revisions/${revisionId}`);
    await page.getByLabel('Revision status').getByText('BUILD_FAILED').waitFor({ timeout: 240_000 });
    await expect(page.getByLabel('Status message').innerText()).resolves.toContain('flag file is missing');
    await screenshot(page, 'console-revision-failed');
    fs.writeFileSync(flag, 'ok');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByLabel('Revision status').getByText('DEPLOYED').waitFor({ timeout: 240_000 });
    const revisions = await pipeline.api('GET', `/v2/deployments/${id}/revisions`);
    expect(revisions.body.resources.map((revision: { id: string }) => revision.id)).toEqual([revisionId]);

    // Deleting asks first, then the deployment leaves the list.
    await page.getByRole('link', { name: '← Deployment' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('group', { name: /^Delete console-retry-/ }).waitFor();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('heading', { name: 'Deployments' }).waitFor();
    await page
      .getByRole('table', { name: 'Deployments' })
      .getByRole('link', { name: created.body.name })
      .waitFor({ state: 'detached', timeout: 60_000 });
  });
});

/** The studio's graph node `id` (a `<g data-node>` of the picture). */
const graphNode = (id: string) => page.locator(`g[data-node="${id.replace(/["\\]/g, '\\$&')}"]`);

/** Starts recording every state a graph node is drawn in (a MutationObserver in the page); returns the reader. */
async function recordNodeStates(): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const doc = (globalThis as any).document;
    const seen = new Set<string>();
    (globalThis as any).__graphxNodeStates = seen;
    const observer = new (globalThis as any).MutationObserver((records: any[]) => {
      for (const record of records)
        seen.add(`${record.target.getAttribute('data-node')}=${record.target.getAttribute('data-state')}`);
    });
    observer.observe(doc.body, { attributes: true, attributeFilter: ['data-state'], subtree: true });
  });
  return () => page.evaluate(() => [...(globalThis as any).__graphxNodeStates] as string[]);
}

async function openStudio(assistant: string): Promise<void> {
  await page.goto(`${consoleUrl}deployments/${deployment.id}/studio`);
  await page.getByLabel('Assistant').selectOption({ label: assistant });
  await page.getByRole('group', { name: `Graph ${assistant}` }).waitFor();
}

describe('the studio of a deployment', () => {
  it('draws the graph with its subgraph nodes, runs it from the form, lights the nodes up as tasks start and finish, and shows the output', async () => {
    await page.goto(`${consoleUrl}deployments/${deployment.id}`);
    await page.getByRole('link', { name: 'Open studio' }).click();
    await page.getByLabel('Assistant').selectOption({ label: 'research' });
    for (const node of ['__start__', 'planner', 'search:query', 'search:summarize', 'writer', '__end__'])
      await graphNode(node).waitFor();
    await page.getByLabel('Show subgraphs (xray)').uncheck();
    await graphNode('search').waitFor();
    await page.getByLabel('Show subgraphs (xray)').check();
    await graphNode('search:query').waitFor();

    await page.getByLabel('topic').fill('tides');
    await page.getByLabel('depth').fill('1');
    const statesSeen = await recordNodeStates();
    await page.getByRole('button', { name: 'Run on a new thread' }).click();
    await page.locator('g[data-node="writer"][data-state="done"]').waitFor({ timeout: 30_000 });
    await page.getByLabel('Run status').getByText('success').waitFor();
    // Every node, subgraph nodes included, was drawn running while its task ran, then done.
    const seen = await statesSeen();
    for (const node of ['planner', 'search:query', 'search:summarize', 'writer']) {
      expect(seen).toEqual(expect.arrayContaining([`${node}=running`, `${node}=done`]));
    }
    await expect(page.getByLabel('Run output').innerText()).resolves.toContain('Report on tides: 2 notes');
    // Subgraph events arrive under their namespace.
    await expect(page.getByLabel('Run events').innerText()).resolves.toMatch(/updates \[search:[0-9a-f-]+\]/);
    await screenshot(page, 'studio-run');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('cancels a run from the page: the run stops on the server too', async () => {
    await page.getByRole('button', { name: 'New thread' }).click();
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
    await threads.getByText(alice.thread_id.slice(0, 8)).waitFor({ state: 'detached' });
    await expect(threads.getByText(bob.thread_id.slice(0, 8)).count()).resolves.toBe(1);
    await screenshot(page, 'studio-threads');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('shows a hostile graph’s markup node names, state and logs as text, and none of it runs', async () => {
    await openStudio('hostile');
    const node = graphNode('<img src=x onerror=alert(1)>');
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

/** An SDK client of the deployment as the studio is (through the control plane, API key, UI user). */
function studioApiClient(): Client {
  return new Client({
    apiUrl: `${pipeline.stack.apiUrl}/v2/deployments/${deployment.id}/app`,
    apiKey: null,
    defaultHeaders: { 'x-api-key': pipeline.apiKey, 'x-auth-scheme': 'graphx-studio' },
  });
}
