/**
 * The RPC with a real Python executor (the python-echo fixture's environment, a real database): a call cancelled
 * before the executor began it is still answered. A run stopped the moment it starts (an `interrupt` that reached the
 * run before it held its thread, multitaskStrategies.test.ts) sends its request and `{cancel}` back to back; the
 * executor read both before its task took a first step, never answered, and the run stayed `running` for good.
 */
import path from 'node:path';
import { InMemoryStore } from '@langchain/langgraph-checkpoint';
import { loadAppConfig } from '../../src/appConfig';
import type { PythonExecutor } from '../../src/python/executor';
import { startPythonExecutor } from '../../src/python/startExecutor';
import { runTuningFromEnv } from '../../src/settings';
import { createTestDatabase, fixtureConfig, projectRoot, RUNTIME_START_MS } from './support/runtimeHarness';

/** Rejects with a message naming what never answered, rather than letting jest's timeout speak. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

describe('the Python executor RPC', () => {
  let database: { url: string; drop: () => Promise<void> };
  let executor: PythonExecutor;
  const envsBefore = process.env.GRAPHX_PYTHON_ENVS_DIR;

  beforeAll(async () => {
    process.env.GRAPHX_PYTHON_ENVS_DIR = path.join(projectRoot, '.test-data', 'python-envs');
    database = await createTestDatabase('pyrpc');
    executor = await startPythonExecutor(
      loadAppConfig(fixtureConfig('runtime-echo-py')),
      database.url,
      new InMemoryStore(),
      runTuningFromEnv({}).pythonCancelGraceMs,
    );
    // The first answer also means the executor finished starting (its schema is in place).
    await within(executor.call('versions', {}), RUNTIME_START_MS, 'the executor starting');
  }, RUNTIME_START_MS + 10_000);

  afterAll(async () => {
    await executor?.close();
    await database?.drop();
    if (envsBefore === undefined) delete process.env.GRAPHX_PYTHON_ENVS_DIR;
    else process.env.GRAPHX_PYTHON_ENVS_DIR = envsBefore;
  });

  test('every call cancelled as it is sent is answered, those the executor had not begun as cancelled; the executor goes on', async () => {
    const calls = Array.from({ length: 20 }, () =>
      within(
        executor.call('versions', {}, { signal: AbortSignal.abort() }).then(
          () => 'answered',
          (error: Error) => error.name,
        ),
        10_000,
        'a call cancelled as it was sent',
      ),
    );
    // A call the executor finished before it read the `{cancel}` line is answered with its result: both are answers.
    const answers = await Promise.all(calls);
    expect(answers.filter((answer) => answer !== 'answered' && answer !== 'CancelledError')).toEqual([]);
    expect(answers).toContain('CancelledError');
    await expect(within(executor.call('versions', {}), 10_000, 'a call after them')).resolves.toMatchObject({
      python: expect.stringMatching(/^3\./),
    });
  });
});
