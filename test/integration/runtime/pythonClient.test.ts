/**
 * The Python `langgraph-sdk` client (from PyPI, in a virtualenv cached under .test-data/) against `graphx dev`:
 * it streams a run and searches threads unchanged. Skipped, saying why, only when pip cannot install the client.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createTestDatabase, projectRoot, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

const venvDir = path.join(projectRoot, '.test-data', 'python-sdk-venv');
const python = path.join(venvDir, 'bin', 'python');

function ensurePythonClient(): string | null {
  const probe = () => spawnSync(python, ['-c', 'import langgraph_sdk'], { encoding: 'utf8' }).status === 0;
  if (fs.existsSync(python) && probe()) return null;
  const created = spawnSync('python3', ['-m', 'venv', venvDir], { encoding: 'utf8' });
  if (created.status !== 0) return `python3 -m venv failed: ${created.stderr}`;
  const installed = spawnSync(python, ['-m', 'pip', 'install', '-q', 'langgraph-sdk'], { encoding: 'utf8', timeout: 300_000 });
  if (installed.status !== 0 || !probe()) return `pip could not install langgraph-sdk: ${installed.stderr.slice(-500)}`;
  return null;
}

const SCRIPT = `
import asyncio, json, sys
from langgraph_sdk import get_client

async def main(url):
    client = get_client(url=url, api_key=None)
    events = []
    async for part in client.runs.stream(None, "agent", input={"messages": [{"role": "user", "content": "from python"}]}, stream_mode="updates"):
        events.append({"event": part.event, "data": part.data})
    thread = await client.threads.create(metadata={"client": "python"})
    async for part in client.runs.stream(thread["thread_id"], "agent", input={"messages": [{"role": "user", "content": "on a thread"}]}, stream_mode="messages-tuple"):
        pass
    found = await client.threads.search(metadata={"client": "python"})
    print(json.dumps({"events": events, "thread_id": thread["thread_id"], "found": [t["thread_id"] for t in found], "status": found[0]["status"]}))

asyncio.run(main(sys.argv[1]))
`;

const skipReason = ensurePythonClient();
const pythonTest = skipReason ? test.skip : test;
if (skipReason) console.warn(`Python client tests skipped: ${skipReason}`);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;

beforeAll(async () => {
  if (skipReason) return;
  database = await createTestDatabase('py');
  runtime = await startDevRuntime('runtime-echo', database.url);
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

pythonTest('the Python langgraph-sdk client streams a run and searches threads', () => {
  const output = execFileSync(python, ['-c', SCRIPT, runtime.url], { encoding: 'utf8', timeout: 60_000 });
  const result = JSON.parse(output.trim().split('\n').at(-1)!) as {
    events: Array<{ event: string; data: any }>;
    thread_id: string;
    found: string[];
    status: string;
  };
  expect(result.events.map((event) => event.event)).toEqual(['metadata', 'updates', 'updates']);
  expect(result.events[1]!.data.agent.messages[0]).toMatchObject({ content: 'echo: from python', type: 'ai' });
  expect(result.found).toEqual([result.thread_id]);
  expect(result.status).toBe('idle');
});
