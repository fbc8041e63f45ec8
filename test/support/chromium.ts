/**
 * A real browser for page tests: Debian's chromium driven by playwright-core (never a downloaded browser build),
 * and a watch on each page for what must never happen on a page of ours: a dialog (alert, confirm, prompt), an
 * uncaught script error, a console error (a Content-Security-Policy violation is one), a failed request. Screenshots go to
 * `.test-data/screenshots/` (kept after the run as artefacts; .test-data is not committed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.resolve(__dirname, '..', '..', '.test-data', 'screenshots');

/**
 * Headless chromium with no network of its own (no component updates, sync, QUIC). playwright gives each launch a
 * fresh temporary profile (its own --user-data-dir), removed on close.
 */
export async function launchChromium(): Promise<Browser> {
  const args = [
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  // Chromium's sandbox needs user namespaces a root process (CI containers run tests as root) is not given.
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
}

/** What a watched page did that it must not: each entry is one sentence. */
export interface PageIncidents {
  list: string[];
}

/** Records dialogs (and dismisses them), uncaught errors, console errors and answers ≥ 400 seen by `page`. */
export function watchPage(page: Page, incidents: PageIncidents = { list: [] }): PageIncidents {
  page.on('dialog', (dialog) => {
    incidents.list.push(`dialog ${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => {});
  });
  page.on('pageerror', (error) => incidents.list.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A failed request is reported below with its address; chromium's own line for it says less.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      incidents.list.push(`console error: ${message.text()}`);
    }
  });
  page.on('response', (response) => {
    if (response.status() >= 400) {
      incidents.list.push(`HTTP ${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
    }
  });
  return incidents;
}

/** A new context and page, watched. */
export async function openWatchedPage(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; incidents: PageIncidents }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  return { context, page, incidents: watchPage(page) };
}

/** Saves a full-page screenshot as `<name>.png` under SCREENSHOT_DIR. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

const AXE_SOURCE_PATH = require.resolve('axe-core/axe.min.js');

/**
 * axe-core's WCAG 2 A/AA rules on the current page. The source is evaluated through the DevTools protocol (page
 * scripts added as tags would be refused by the page's own Content-Security-Policy, which stays on).
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(fs.readFileSync(AXE_SOURCE_PATH, 'utf8'));
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<any> } }).axe;
    const result = await axe.run((globalThis as any).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
    return (result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>).map(
      (violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
  });
  return violations;
}

/**
 * Starts recording every `data-node=data-state` pair the page draws (a MutationObserver in the page, so a state held
 * for a moment is not missed between two polls); returns the reader.
 */
export async function recordNodeStates(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen = new Set<string>();
    (globalThis as any).__graphxNodeStates = seen;
    const observer = new (globalThis as any).MutationObserver((records: any[]) => {
      for (const record of records)
        seen.add(`${record.target.getAttribute('data-node')}=${record.target.getAttribute('data-state')}`);
    });
    observer.observe((globalThis as any).document.body, { attributes: true, attributeFilter: ['data-state'], subtree: true });
  });
  return () => page.evaluate(() => [...(globalThis as any).__graphxNodeStates] as string[]);
}
