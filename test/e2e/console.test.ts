/**
 * Issue 22's acceptance in a real browser (Debian's chromium driven by playwright-core) against a real stack
 * (Temporal dev server, PostgreSQL, git, the process runner behind the gateway): the console signs in with an API
 * key, creates a deployment from a `file://` repository through its form, follows the revision to DEPLOYED with its
 * build log streaming, opens the deployment's studio, draws and runs its graph with the nodes lighting up, and retries
 * a failed revision from its page. The tests walk one flow in order. Every page is watched for dialogs, script
 * errors, console errors and failed requests, checked with axe-core, and photographed into .test-data/screenshots/.
 * The rest of the studio is studio.test.ts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  accessibilityViolations,
  launchChromium,
  openWatchedPage,
  recordNodeStates,
  screenshot,
  type PageIncidents,
} from '../support/chromium';
import { ensureConsoleBuild, graphNode, STUDIO_FIXTURE } from '../support/consolePages';
import { testEnv } from '../support/env';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const BUILD_MARKUP = `<img src=x onerror=alert('build')>`;
const SECRET_VALUE = `s3cret-${crypto.randomBytes(6).toString('hex')}`;

let pipeline: PipelineStack;
let repo: GitRepo;
let browser: Browser;
let page: Page;
let incidents: PageIncidents;
let consoleUrl: string;
/** The deployment the form creates. */
let deployment: { id: string; url: string };

beforeAll(async () => {
  ensureConsoleBuild();
  [pipeline, browser] = await Promise.all([startPipelineStack({ env: { GRAPHX_RUNNER: 'process' } }), launchChromium()]);
  repo = createGitRepo(STUDIO_FIXTURE);
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

  it('opens the deployment’s studio: draws the graph with its subgraph nodes, runs it from the form, lights the nodes up as tasks start and finish, and shows the output', async () => {
    await page.goto(`${consoleUrl}deployments/${deployment.id}`);
    await page.getByRole('link', { name: 'Open studio' }).click();
    await page.getByLabel('Assistant').selectOption({ label: 'research' });
    for (const node of ['__start__', 'planner', 'search:query', 'search:summarize', 'writer', '__end__'])
      await graphNode(page, node).waitFor();
    await page.getByLabel('Show subgraphs (xray)').uncheck();
    await graphNode(page, 'search').waitFor();
    await page.getByLabel('Show subgraphs (xray)').check();
    await graphNode(page, 'search:query').waitFor();

    await page.getByLabel('topic').fill('tides');
    await page.getByLabel('depth').fill('1');
    const statesSeen = await recordNodeStates(page);
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
