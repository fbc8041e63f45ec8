/**
 * What the console's browser tests share: the built console, signing in, the studio's pages, and an SDK client that
 * reaches a deployment as the studio does (through the control plane's door, API key, debugging-UI user).
 */
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import type { Page } from 'playwright-core';

/** The fixture app the console tests deploy: a subgraph, an interrupt, a chat, a hostile graph, custom auth. */
export const STUDIO_FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'studio-graphs');

/** Builds the console when its build is missing or stale (npm ci has built it on a fresh clone). */
export function ensureConsoleBuild(): void {
  const { ensureConsoleBuilt } = require('../../scripts/build-console.js') as {
    ensureConsoleBuilt: () => { dir: string | null };
  };
  if (!ensureConsoleBuilt().dir) throw new Error('the web console could not be built');
}

/** Signs in on the console's sign-in form. */
export async function signInToConsole(page: Page, consoleUrl: string, apiKey: string): Promise<void> {
  await page.goto(consoleUrl);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
}

/** The studio's graph node `id` (a `<g data-node>` of the picture). */
export function graphNode(page: Page, id: string) {
  return page.locator(`g[data-node="${id.replace(/["\\]/g, '\\$&')}"]`);
}

/** Opens the studio of a deployment on `assistant` and waits for its picture. */
export async function openStudio(page: Page, consoleUrl: string, deploymentId: string, assistant: string): Promise<void> {
  await page.goto(`${consoleUrl}deployments/${deploymentId}/studio`);
  await page.getByLabel('Assistant').selectOption({ label: assistant });
  await page.getByRole('group', { name: `Graph ${assistant}` }).waitFor();
}

/** An SDK client of the deployment as the studio is. */
export function studioApiClient(apiUrl: string, deploymentId: string, apiKey: string): Client {
  return new Client({
    apiUrl: `${apiUrl}/v2/deployments/${deploymentId}/app`,
    apiKey: null,
    defaultHeaders: { 'x-api-key': apiKey, 'x-auth-scheme': 'graphx-studio' },
  });
}
