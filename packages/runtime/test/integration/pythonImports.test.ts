/**
 * The executor defers the body of `langsmith.types` (graphx_executor/lazy_imports.py): an app that never calls the
 * LangSmith API does not hold its ~160 modules of API models, and an app that reads them gets them, in every way
 * Python code reaches them. Runs the app's own environment (the runtime-echo-py fixture's, as `graphx dev` builds it).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadAppConfig } from '../../src/appConfig';
import { ensurePythonEnv } from '../../src/python/pythonEnv';
import { fixtureConfig, projectRoot, RUNTIME_START_MS } from './support/runtimeHarness';

const run = promisify(execFile);

const SCRIPT = `
import json, sys
import graphx_executor.__main__  # the executor's imports: langgraph, langchain-core, langsmith's run trees
import langchain_core.tracers.langchain
loaded = lambda: sorted(m for m in sys.modules if m.startswith("langsmith.types."))
deferred = loaded()
import langsmith
from langsmith.types import Run
via_attribute = langsmith.types.Dataset.__name__
from langsmith.types import *
from langsmith import Client
Client(api_key="not-a-key", api_url="http://127.0.0.1:9")
print(json.dumps({"deferred": deferred, "after": len(loaded()), "run": Run.__name__, "attribute": via_attribute,
                  "star": "Session" in globals()}))
`;

test(
  "an executor loads none of langsmith.types' models until app code reads one, then all of them",
  async () => {
    const config = loadAppConfig(fixtureConfig('runtime-echo-py'));
    const python = await ensurePythonEnv({
      envsDir: path.join(projectRoot, '.test-data', 'python-envs'),
      config: config.python!,
      appDir: config.appDir,
    });
    const { stdout } = await run(python, ['-c', SCRIPT], {
      env: { PATH: process.env.PATH ?? '', PYTHONPATH: path.join(projectRoot, 'packages', 'runtime', 'python') },
    });
    const result = JSON.parse(stdout) as { deferred: string[]; after: number; run: string; attribute: string; star: boolean };
    // Only the one module langsmith's run trees import by name (run_select_field).
    expect(result.deferred).toEqual(['langsmith.types.run_select_field']);
    expect(result.after).toBeGreaterThan(100);
    expect(result).toMatchObject({ run: 'Run', attribute: 'Dataset', star: true });
  },
  RUNTIME_START_MS,
);
