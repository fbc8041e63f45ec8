/**
 * A Python app's executor killed under its server (the kernel's OOM killer picks the process that allocates, which is
 * the executor, not the server) must not leave a server that answers /ok while every Python run fails, as it did:
 * the runtime stops and exits 137, as a killed process reports, so its runner (or the worker supervisor) starts a
 * replacement. The container runner's hostile-tenant test shows the replacement (containerTarget.test.ts, memory).
 * An executor that cannot stop a cancelled run is killed by its server, with the same outcome.
 */
import fs from 'node:fs';
import { Client } from '@langchain/langgraph-sdk';
import { waitFor } from '@graphx/kit/net/ports';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;

beforeAll(async () => {
  database = await createTestDatabase('pyloss');
  runtime = await startDevRuntime('runtime-echo-py', database.url);
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

/** The processes whose parent is `pid` (from /proc/<pid>/stat: the parent is the field after the state). */
/** The process lives (a zombie waiting for its new parent to reap it has ended). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] as string);
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

test('a runtime whose Python executor is killed stops and exits 137, its log naming the executor and the likely cause', async () => {
  const [executor, ...others] = childrenOf(runtime.child.pid!);
  expect({ executor: typeof executor, others }).toEqual({ executor: 'number', others: [] });
  const exited = new Promise<number | null>((resolve) => runtime.child.once('exit', (code) => resolve(code)));
  process.kill(executor!, 'SIGKILL');
  expect(await exited).toBe(137);
  expect(runtime.output()).toContain(
    'the Python executor was killed (SIGKILL): out of memory, unless someone killed it; the runtime stops so that the instance is replaced',
  );
});

test('an executor that cannot read its socket ends with its server: a SIGKILLed runtime leaves no executor behind', async () => {
  // A stopped executor stands for one stuck before it reads the socket (it once waited 180 s in a schema lock, and
  // outlived its killed server meanwhile): only the kernel's parent-death signal can end it.
  const second = await startDevRuntime('runtime-echo-py', database.url);
  const [executor] = childrenOf(second.child.pid!);
  expect(typeof executor).toBe('number');
  try {
    process.kill(executor!, 'SIGSTOP');
    const exited = new Promise((resolve) => second.child.once('exit', resolve));
    process.kill(second.child.pid!, 'SIGKILL');
    await exited;
    const deadline = Date.now() + 5000;
    while (running(executor!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running(executor!)).toBe(false);
  } finally {
    if (running(executor!)) process.kill(executor!, 'SIGKILL');
    await second.stop();
  }
});

test("a cancelled run whose graph blocks the executor's event loop: the executor is killed after the grace period and the runtime stops, its log naming why", async () => {
  // time.sleep in an async node: the executor's loop never gets the cancellation, and every other Python run of the
  // instance waits behind it; without the grace period the cancelled run would hold its thread for as long.
  // A database of its own: the run it leaves behind is never taken over by another test's instance.
  const stuckDatabase = await createTestDatabase('pystuck');
  const stuck = await startDevRuntime('runtime-stuck-py', stuckDatabase.url, { GRAPHX_RUNTIME_PYTHON_CANCEL_GRACE_MS: '1500' });
  const [executor] = childrenOf(stuck.child.pid!);
  try {
    const client = new Client({ apiUrl: stuck.url, apiKey: null });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'stuck', { input: { seconds: 600 } });
    // "running" is set before the graph's node starts: a cancel then is delivered, and nothing is stuck. The node says
    // on stderr when it blocks.
    await waitFor(
      'the node to block the event loop',
      async () => stuck.output().includes('stuck.py: blocking the event loop'),
      60_000,
    );
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('running');
    const exited = new Promise<number | null>((resolve) => stuck.child.once('exit', (code) => resolve(code)));
    const cancelledAt = Date.now();
    await client.runs.cancel(thread.thread_id, run.run_id, false, 'interrupt');
    // Bounded, so that a runtime that never exits fails here and is still stopped below (not left behind by a timeout).
    const noExit = new Promise<string>((resolve) =>
      setTimeout(() => resolve('still running 30 s after the cancel'), 30_000).unref(),
    );
    expect(await Promise.race([exited, noExit])).toBe(137);
    expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(1500);
    expect(stuck.output()).toMatch(
      /the runtime killed its Python executor: a cancelled \S+ call did not stop within 1\.5 s \(sync code blocking the executor's event loop, or a graph that ignores its cancellation\); the runtime stops so that the instance is replaced/,
    );
    expect(running(executor!)).toBe(false);
  } finally {
    if (executor && running(executor)) process.kill(executor, 'SIGKILL');
    await stuck.stop();
    await stuckDatabase.drop();
  }
});
