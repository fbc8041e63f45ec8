/**
 * A Python app's executor killed under its server (the kernel's OOM killer picks the process that allocates, which is
 * the executor, not the server) must not leave a server that answers /ok while every Python run fails, as it did:
 * the runtime stops and exits 137, as a killed process reports, so its runner (or the worker supervisor) starts a
 * replacement. The container runner's hostile-tenant test shows the replacement (containerTarget.test.ts, memory).
 */
import fs from 'node:fs';
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
