/**
 * `/docs` in a real browser: Debian's headless Chromium (driven by playwright-core, no browser download) loads the page
 * from a real API server over loopback, fetches our /openapi.json and renders the deployments routes with their
 * parameters and examples, loading nothing from anywhere but our server.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { chromium, type Browser } from 'playwright-core';
import { buildApi } from '../../src/api/app';
import type { Db } from '../../src/db/knex';
import { testConfig, testDb, testSecretBox, testTemporalClient } from '../support/env';

const CHROMIUM = '/usr/bin/chromium';

describe('the /docs page in headless Chromium', () => {
  let db: Db;
  let temporal: Client;
  let server: http.Server;
  let baseUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    server = http.createServer(buildApi({ config, db, secretBox: testSecretBox(config), temporal }).app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Tests run as root here (and in CI containers), and Chromium refuses to start its sandbox as root; the page is
      // our own, served from loopback, so running it unsandboxed exposes nothing.
      chromiumSandbox: false,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await temporal.connection.close();
    await db.destroy();
  });

  it('renders the deployments routes from our /openapi.json with parameters and examples, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (req) => requested.push(req.url()));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });

    const response = await page.goto(`${baseUrl}/docs`);
    expect(response?.status()).toBe(200);
    const listDeployments = page.locator('#operations-deployments-get_v2_deployments');
    await listDeployments.waitFor({ timeout: 30_000 });
    expect(await listDeployments.locator('.opblock-summary-path').innerText()).toBe('/v2/deployments');
    await expect(
      page.locator('.opblock-summary-path', { hasText: '/v2/deployments/{deployment_id}' }).count(),
    ).resolves.toBeGreaterThan(0);

    // Opened: its query parameters and the example answer (a page of deployments) are shown.
    await listDeployments.locator('.opblock-summary').click();
    const parameters = listDeployments.locator('.parameters .parameter__name');
    await parameters.first().waitFor();
    expect(await parameters.allInnerTexts()).toEqual(expect.arrayContaining([expect.stringContaining('name_contains')]));
    await expect(listDeployments.locator('.responses-wrapper').innerText()).resolves.toContain('support-agent');

    expect(requested).toContain(`${baseUrl}/openapi.json`);
    expect(requested.filter((url) => !url.startsWith(`${baseUrl}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
