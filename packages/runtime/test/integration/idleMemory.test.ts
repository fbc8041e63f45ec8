/**
 * An instance that goes quiet gives its young generation back (src/idleMemory.ts): with the 16 MB semi-spaces a 1 GB
 * container gets, an app that has started and waits is resident in ~20 MB less (what `ps` shows) than the same app
 * without the collection; a busy instance is never collected. The app runs on the images' Node (DEFAULT_NODE_MAJOR, from
 * the npm registry as the base image takes it): Node 20's V8 shrinks an idle young generation by itself, 22 and 24's
 * do not after a start or light traffic, which is what this is for.
 * Both graph languages: a Python app's Node side is the same server.
 */
import fs from 'node:fs';
import { Client } from '@langchain/langgraph-sdk';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { waitFor } from '@graphx/kit/net/ports';
import { cachedNodeBinary } from '@graphx/kit/os/nodeRelease';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  startDevRuntime,
  type RuntimeProcess,
} from './support/runtimeHarness';
import { recordLoadedModules } from './support/loadedModules';

const CONTAINER_NODE_OPTIONS = '--max-semi-space-size=16';
// Longer than the 5 s over which V8 (Node 20's too) judges the allocation rate: a collection after a shorter quiet
// spell still sees the burst's rate, and V8 then keeps the semi-spaces. The default window is 10 s.
const QUIET_WINDOW_MS = 6_000;
const hi = { messages: [{ role: 'user', content: 'hi' }] };

function residentMb(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function metric(runtime: RuntimeProcess, pattern: RegExp, absent?: number): Promise<number> {
  const text = await (await fetch(`${runtime.url}/metrics`)).text();
  const match = text.match(pattern);
  if (!match && absent !== undefined) return absent;
  if (!match) throw new Error(`no ${pattern} in /metrics`);
  return Number(match[1]);
}

const collections = (runtime: RuntimeProcess): Promise<number> =>
  metric(runtime, /^graphx_runtime_idle_collections_total\{[^}]*\} (\S+)$/m);
const minorCollections = (runtime: RuntimeProcess): Promise<number> =>
  metric(runtime, /^nodejs_gc_duration_seconds_count\{[^}]*kind="minor"[^}]*\} (\S+)$/m, 0);
const newSpaceMb = async (runtime: RuntimeProcess) =>
  (await metric(runtime, /^nodejs_heap_space_size_total_bytes\{[^}]*space="new"[^}]*\} (\S+)$/m)) / 1024 / 1024;

describe.each(graphLanguages())('idle memory (%s graphs)', (language) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let collecting: RuntimeProcess;
  let notCollecting: RuntimeProcess;

  beforeAll(async () => {
    database = await createTestDatabase(`idle_${language}`);
    const imageNode = await cachedNodeBinary(DEFAULT_NODE_MAJOR);
    const start = (windowMs: number) =>
      startDevRuntime(
        fixtureIn('runtime-echo', language),
        database.url,
        { NODE_OPTIONS: CONTAINER_NODE_OPTIONS, GRAPHX_RUNTIME_IDLE_COLLECT_MS: String(windowMs) },
        imageNode.binary,
      );
    collecting = await start(QUIET_WINDOW_MS);
    notCollecting = await start(0);
  }, 2 * RUNTIME_START_MS);

  afterAll(async () => {
    const exitCodes = [await collecting?.stop(), await notCollecting?.stop()];
    await database?.drop();
    expect(exitCodes).toEqual([0, 0]);
  });

  // Polled once per window and a half: a scrape is activity too (~4 ms of a JavaScript app's event loop here, more for
  // a Python app's and on a slower machine), and a quiet window must stay quiet (polled every 2 s, a Python app in CI
  // had no quiet window in 30 s, then collected during the next test's 9 s without a scrape).
  const nextCollection = async (after: number) =>
    waitFor(
      'a collection in a quiet window',
      async () => (await collections(collecting)) > after,
      6 * QUIET_WINDOW_MS,
      1.5 * QUIET_WINDOW_MS,
    );

  // A JavaScript app's start fills both semi-spaces (it loads its graphs on this side); a Python app's Node side
  // allocates little while it starts, and pages never written are not resident, given back or not, so its first runs
  // fill them: until V8 has swept the young generation twice (both semi-spaces written through), and for a second so
  // that the reducer sees a busy window. No longer: a long burst (a JavaScript app's 18 sweeps in a second) arms V8's
  // own memory reducer, which then shrinks the young generation of the instance that does not collect too.
  const fillYoungGeneration = async (runtime: RuntimeProcess) => {
    const client = new Client({ apiUrl: runtime.url, apiKey: null });
    const target = (await minorCollections(runtime)) + 2;
    const busyUntil = Date.now() + 1_000;
    const giveUpAt = Date.now() + 60_000;
    while (Date.now() < busyUntil || (await minorCollections(runtime)) < target) {
      if (Date.now() > giveUpAt) throw new Error('two young-generation collections did not happen in 60 s of runs');
      for (let i = 0; i < 10; i += 1) await client.runs.wait(null, 'agent', { input: hi });
    }
  };

  test('a started instance that stays quiet gives back the semi-spaces its first work filled: ≥ 8 MB less resident', async () => {
    let collectedBefore = 0;
    if (language === 'python') {
      await fillYoungGeneration(notCollecting);
      await fillYoungGeneration(collecting);
      collectedBefore = await collections(collecting);
    }
    await nextCollection(collectedBefore);
    // The same app without the collection keeps both 16 MB semi-spaces committed for as long as it stays idle.
    expect(await newSpaceMb(notCollecting)).toBeGreaterThanOrEqual(16);
    expect(await newSpaceMb(collecting)).toBeLessThanOrEqual(4);
    expect(residentMb(notCollecting.child.pid!) - residentMb(collecting.child.pid!)).toBeGreaterThanOrEqual(8);
  });

  test('a busy instance is not collected while it serves, a quiet one only once per quiet spell', async () => {
    const settled = await collections(collecting);
    await new Promise((resolve) => setTimeout(resolve, 1.5 * QUIET_WINDOW_MS));
    expect(await collections(collecting)).toBe(settled);
    // Runs back to back for two windows: no collection in the middle of them; one in the quiet spell after them.
    const busyUntil = Date.now() + 2 * QUIET_WINDOW_MS;
    const client = new Client({ apiUrl: collecting.url, apiKey: null });
    while (Date.now() < busyUntil) await client.runs.wait(null, 'agent', { input: hi });
    expect(await collections(collecting)).toBe(settled);
    await nextCollection(settled);
    expect(await newSpaceMb(collecting)).toBeLessThanOrEqual(4);
  });
});

// What an agent server that never fetches nor makes an https request does not load (a Python app's is such a server):
// Node's fetch implementation (undici, with http2 and web streams: ~2.4 MB of heap, ~10 MB resident on Node 24),
// which Koa materialises by naming the global `Response` for every JSON answer unless the server writes plain JSON
// bodies itself (@graphx/kit/http/plainJsonBodies); tls, which prom-client's index requires for its Pushgateway
// (@graphx/kit/http/promClient requires its files one by one); readline; ws.
describe("a Python app's server on the images' Node, serving JSON", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;
  const record = recordLoadedModules();

  beforeAll(async () => {
    database = await createTestDatabase('idle_undici');
    runtime = await startDevRuntime(
      fixtureIn('runtime-echo', 'python'),
      database.url,
      record.env(CONTAINER_NODE_OPTIONS),
      (await cachedNodeBinary(DEFAULT_NODE_MAJOR)).binary,
    );
  }, RUNTIME_START_MS);

  afterAll(async () => {
    const exitCode = await runtime?.stop();
    await database?.drop();
    record.remove();
    expect(exitCode).toBe(0);
  });

  test("answers runs, threads, state and assistants without loading Node's fetch, tls, readline or ws", async () => {
    const client = new Client({ apiUrl: runtime.url, apiKey: null });
    const thread = await client.threads.create({ metadata: { purpose: 'undici' } });
    const values: any = await client.runs.wait(thread.thread_id, 'agent', { input: hi });
    expect(values.messages.length).toBeGreaterThan(1);
    expect((await client.threads.getState(thread.thread_id)).values).toEqual(values);
    const streamed = [];
    for await (const part of client.runs.stream(null, 'agent', { input: hi, streamMode: 'updates' })) streamed.push(part);
    expect(streamed.map((part) => part.event)).toContain('updates');
    expect((await client.assistants.search({ graphId: 'agent' })).length).toBeGreaterThan(0);
    expect((await client.threads.search({ metadata: { purpose: 'undici' } })).map((t) => t.thread_id)).toEqual([
      thread.thread_id,
    ]);
    expect((await fetch(`${runtime.url}/ok`)).status).toBe(200);
    // The preload checks every 200 ms.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const loaded = record.loadedBy(runtime.child.pid!);
    expect(loaded).toContain('koa');
    expect(loaded).not.toContain('node:undici');
    // Nor tls (prom-client's index and the webhook poster's https; ~6 MB resident), nor readline (the executor's lines).
    expect(loaded).not.toContain('node:tls');
    expect(loaded).not.toContain('node:readline');
    // Nor `ws`, which the protocol's WebSocket transport requires on its first handshake (socketSession.ts).
    expect(loaded).not.toContain('ws');
  });
});
