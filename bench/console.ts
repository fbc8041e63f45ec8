/**
 * The web console's budget figures (issue 22): the JavaScript and CSS a browser loads to show the first page
 * (gzipped, from the build in packages/console/dist; target ≤ 300 KB of JavaScript), what opening a studio adds, and
 * how long the graph picture of a 50-node graph takes to lay out and render in headless chromium (target < 500 ms):
 * the studio's own GraphView and layout code, bundled with esbuild onto a bare loopback page.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';
import { launchChromium } from '../test/support/chromium';

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'packages', 'console', 'dist');
const STUDIO_SOURCE = path.join(ROOT, 'packages', 'console', 'src', 'studio');
const WARM_RENDERS = 15;
const NODES = 50;

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const gzipSize = (file: string) => zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;

/** A chunk and every chunk it imports statically (what loading it costs). */
function staticClosure(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const code = fs.readFileSync(path.join(DIST, 'assets', entry), 'utf8');
  for (const match of code.matchAll(/(?:from|import)\s*["'`]\.\/([^"'`]+\.js)["'`]/g)) staticClosure(match[1]!, seen);
  return seen;
}

/** Chunks loaded by `import()` from `files`. */
function lazyImportsOf(files: string[]): string[] {
  return files.flatMap((file) =>
    [...fs.readFileSync(path.join(DIST, 'assets', file), 'utf8').matchAll(/import\(\s*["'`]\.\/([^"'`]+\.js)["'`]\s*\)/g)].map(
      (match) => match[1]!,
    ),
  );
}

function bundleFigures(): void {
  const { ensureConsoleBuilt } = require('../scripts/build-console.js') as { ensureConsoleBuilt: () => { dir: string | null } };
  if (!ensureConsoleBuilt().dir) throw new Error('the console is not built (npm run build:console)');
  const page = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
  const entry = /<script[^>]+src="\.\/assets\/([^"]+\.js)"/.exec(page)?.[1];
  const styles = [...page.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="\.\/assets\/([^"]+\.css)"/g)].map((match) => match[1]!);
  if (!entry) throw new Error('no entry script in dist/index.html');
  const firstLoad = staticClosure(entry);
  const jsGzip = [...firstLoad].reduce((sum, file) => sum + gzipSize(path.join(DIST, 'assets', file)), 0);
  const cssGzip = styles.reduce((sum, file) => sum + gzipSize(path.join(DIST, 'assets', file)), 0);
  console.log(
    `first load: ${firstLoad.size} script file(s), JavaScript ${kib(jsGzip)} gzipped (target ≤ 300 KiB), CSS ${kib(cssGzip)}`,
  );
  // Each lazy chunk (a studio, its chat) and what it adds to what was loaded before it.
  const loaded = new Set(firstLoad);
  const queue = lazyImportsOf([...firstLoad]);
  while (queue.length > 0) {
    const chunk = queue.shift()!;
    const added = [...staticClosure(chunk)].filter((file) => !loaded.has(file));
    if (added.length === 0) continue;
    const addedGzip = added.reduce((sum, file) => sum + gzipSize(path.join(DIST, 'assets', file)), 0);
    console.log(
      `  opening ${chunk.replace(/-[A-Za-z0-9_-]+\.js$/, '')} adds ${kib(addedGzip)} gzipped (${added.length} file(s))`,
    );
    added.forEach((file) => loaded.add(file));
    queue.push(...lazyImportsOf(added));
  }
}

/** A graph as /assistants/{id}/graph answers: a chain with conditional loops back and skips forward. */
export function syntheticGraph(count: number) {
  const ids = Array.from({ length: count }, (_, index) => `node_${index}`);
  const nodes = [{ id: '__start__' }, ...ids.map((id) => ({ id })), { id: '__end__' }];
  const edges: Array<{ source: string; target: string; conditional: boolean }> = [
    { source: '__start__', target: ids[0]!, conditional: false },
    { source: ids[count - 1]!, target: '__end__', conditional: false },
  ];
  ids.forEach((id, index) => {
    if (index + 1 < count) edges.push({ source: id, target: ids[index + 1]!, conditional: index % 5 === 4 });
    if (index % 5 === 4 && index >= 3) edges.push({ source: id, target: ids[index - 3]!, conditional: true });
    if (index % 7 === 0 && index + 4 < count) edges.push({ source: id, target: ids[index + 4]!, conditional: true });
  });
  return { nodes, edges };
}

async function renderFigures(): Promise<void> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-bench-console-'));
  const entry = path.join(workDir, 'bench.tsx');
  fs.writeFileSync(
    entry,
    `import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { GraphView } from ${JSON.stringify(path.join(STUDIO_SOURCE, 'GraphView'))};
import { layoutGraph } from ${JSON.stringify(path.join(STUDIO_SOURCE, 'graphLayout'))};
const host = document.getElementById('root')!;
(window as any).renderOnce = (graph: any) => {
  const root = createRoot(host);
  const started = performance.now();
  flushSync(() => root.render(<GraphView graph={graph} states={new Map()} title="bench" />));
  // Layout of the drawn SVG is part of showing it.
  (document.querySelector('svg') as SVGSVGElement).getBBox();
  const rendered = performance.now() - started;
  const nodes = document.querySelectorAll('g[data-node]').length;
  root.unmount();
  return { rendered, nodes };
};
(window as any).layoutOnce = (graph: any) => { const started = performance.now(); layoutGraph(graph); return performance.now() - started; };
`,
  );
  const built = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    minify: true,
    jsx: 'automatic',
    nodePaths: [path.join(ROOT, 'node_modules')],
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  fs.rmSync(workDir, { recursive: true, force: true });
  const script = built.outputFiles[0]!.text;
  const server = http.createServer((req, res) => {
    if (req.url === '/bench.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><div id="root"></div><script type="module" src="/bench.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await page.waitForFunction(() => typeof (globalThis as any).renderOnce === 'function');
    const graph = syntheticGraph(NODES);
    const first = await page.evaluate((input) => (globalThis as any).renderOnce(input), graph);
    const warm: number[] = [];
    const layouts: number[] = [];
    for (let round = 0; round < WARM_RENDERS; round += 1) {
      warm.push((await page.evaluate((input) => (globalThis as any).renderOnce(input), graph)).rendered);
      layouts.push(await page.evaluate((input) => (globalThis as any).layoutOnce(input), graph));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      `graph picture of ${NODES} nodes (+ start, end; ${graph.edges.length} edges, ${first.nodes} drawn): first render ${first.rendered.toFixed(1)} ms, ` +
        `median of ${WARM_RENDERS} more ${median(warm).toFixed(1)} ms (layout alone ${median(layouts).toFixed(1)} ms); target < 500 ms`,
    );
  } finally {
    await browser.close();
    server.close();
  }
}

export async function benchConsole(): Promise<void> {
  bundleFigures();
  await renderFigures();
}
