/**
 * The executor defers the bodies of `langsmith.types` and `langgraph_sdk` (graphx_executor/lazy_imports.py): an app
 * that never calls the LangSmith API does not hold its ~160 modules of API models, one that never calls
 * `get_client()` nor declares custom auth does not hold the SDK's client (httpx, websockets), and an app that reads
 * them gets them, in every way Python code reaches them — the SDK with the executor's loopback transport patched in.
 * Runs the app's own environment (the runtime-echo-py fixture's, as `graphx dev` builds it).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadAppConfig } from '../../src/appConfig';
import { ensurePythonEnv } from '../../src/python/pythonEnv';
import { fixtureConfig, projectRoot, RUNTIME_START_MS } from './support/runtimeHarness';

const run = promisify(execFile);

const LANGSMITH_SCRIPT = `
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

async function runPython(script: string): Promise<{ stdout: string }> {
  const config = loadAppConfig(fixtureConfig('runtime-echo-py'));
  const python = await ensurePythonEnv({
    envsDir: path.join(projectRoot, '.test-data', 'python-envs'),
    config: config.python!,
    appDir: config.appDir,
  });
  return run(python, ['-c', script], {
    env: { PATH: process.env.PATH ?? '', PYTHONPATH: path.join(projectRoot, 'packages', 'runtime', 'python') },
  });
}

test(
  "an executor loads none of langsmith.types' models until app code reads one, then all of them",
  async () => {
    const { stdout } = await runPython(LANGSMITH_SCRIPT);
    const result = JSON.parse(stdout) as { deferred: string[]; after: number; run: string; attribute: string; star: boolean };
    // Only the one module langsmith's run trees import by name (run_select_field).
    expect(result.deferred).toEqual(['langsmith.types.run_select_field']);
    expect(result.after).toBeGreaterThan(100);
    expect(result).toMatchObject({ run: 'Run', attribute: 'Dataset', star: true });
  },
  RUNTIME_START_MS,
);

const SDK_SCRIPT = `
import json, sys
import graphx_executor.__main__  # the executor's imports: langgraph (whose runtime module imports langgraph_sdk.auth)
from graphx_executor import loopback
loopback.install()
sys.path.insert(0, sys.argv[1])
import echo_app.graph, echo_app.features  # the app's graphs
unused = {name: name in sys.modules for name in ("langgraph_sdk.client", "httpx", "websockets")}
import langgraph_sdk
version = langgraph_sdk.__version__
from langgraph_sdk import Auth, get_client
from langgraph_sdk.auth.types import StudioUser
from langgraph_sdk._async import client
client_object = get_client(url="http://127.0.0.1:9")
print(json.dumps({"unused": unused, "version": version, "auth": Auth.__name__, "client": type(client_object).__name__,
                  "transport": client.get_asgi_transport().__name__, "studio": StudioUser.__name__}))
`;

test(
  "an executor loads langgraph_sdk's client only when app code imports the SDK, with the loopback transport patched in",
  async () => {
    const appDir = path.dirname(fixtureConfig('runtime-echo-py'));
    const { stdout } = await runPython(SDK_SCRIPT.replace('sys.argv[1]', JSON.stringify(appDir)));
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result.unused).toEqual({ 'langgraph_sdk.client': false, httpx: false, websockets: false });
    expect(result).toMatchObject({
      version: expect.stringMatching(/^\d+\.\d+/),
      auth: 'Auth',
      client: 'LangGraphClient',
      transport: 'LoopbackTransport',
      studio: 'StudioUser',
    });
  },
  RUNTIME_START_MS,
);
