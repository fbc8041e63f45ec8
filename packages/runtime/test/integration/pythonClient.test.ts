/**
 * The Python `langgraph-sdk` client (from PyPI, in a virtualenv cached under .test-data/) against `graphx dev`:
 * it streams a run, searches threads, reads history, runs in the background and joins, cancels, uses the store,
 * manages assistants (versions, graph, schemas) and crons (one firing on a thread) unchanged. Skipped, saying why, only when pip cannot install the client.
 */
import { execFileSync } from 'node:child_process';
import {
  createTestDatabase,
  startDevRuntime,
  type RuntimeProcess,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  type GraphLanguage,
} from './support/runtimeHarness';
import { ensurePythonClientNow, pythonSdkInterpreter } from './support/pythonSdk';

const python = pythonSdkInterpreter;

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

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  const skipReason = ensurePythonClientNow();
  const pythonTest = skipReason ? test.skip : test;
  if (skipReason) console.warn(`Python client tests skipped: ${skipReason}`);

  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    if (skipReason) return;
    database = await createTestDatabase('py');
    runtime = await startDevRuntime(fixtureIn('runtime-echo', language), database.url);
  }, RUNTIME_START_MS + 30_000);

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

  /** Runs `body` (the inside of `async def main(client)`, returning a JSON-able value) with the Python client. */
  function runPython(body: string): any {
    const script = [
      'import asyncio, json, sys',
      'from langgraph_sdk import get_client',
      'async def main(client):',
      ...body
        .trim()
        .split('\n')
        .map((line) => `    ${line}`),
      'print(json.dumps(asyncio.run(main(get_client(url=sys.argv[1], api_key=None)))))',
    ].join('\n');
    const output = execFileSync(python, ['-c', script, runtime.url], { encoding: 'utf8', timeout: 60_000 });
    return JSON.parse(output.trim().split('\n').at(-1)!);
  }

  pythonTest('the Python client reads a thread history newest first, the head first, and pages it with before', () => {
    const result = runPython(`
thread = await client.threads.create()
await client.runs.wait(thread["thread_id"], "agent", input={"messages": [{"role": "user", "content": "hist"}]})
history = await client.threads.get_history(thread["thread_id"], limit=10)
state = await client.threads.get_state(thread["thread_id"])
older = await client.threads.get_history(thread["thread_id"], limit=1, before=history[0]["checkpoint"])
return {
    "counts": [len(s["values"].get("messages", [])) for s in history],
    "head_is_state": history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"],
    "head_next": history[0]["next"],
    "older": [o["checkpoint"]["checkpoint_id"] for o in older] == [history[1]["checkpoint"]["checkpoint_id"]],
}`);
    expect(result.counts[0]).toBe(3);
    expect(result.counts).toEqual([...result.counts].sort((a: number, b: number) => b - a));
    expect(result).toMatchObject({ head_is_state: true, head_next: [], older: true });
  });

  pythonTest('the Python client creates a background run, joins it and replays its resumable stream', () => {
    const result = runPython(`
thread = await client.threads.create()
run = await client.runs.create(thread["thread_id"], "agent", input={"messages": [{"role": "user", "content": "bg"}]}, stream_resumable=True)
values = await client.runs.join(thread["thread_id"], run["run_id"])
events = [part.event async for part in client.runs.join_stream(thread["thread_id"], run["run_id"], last_event_id="-1")]
done = await client.runs.get(thread["thread_id"], run["run_id"])
return {"created": run["status"], "texts": [m["content"] for m in values["messages"]], "events": events, "status": done["status"]}`);
    expect(result).toEqual({
      created: 'pending',
      texts: ['bg', 'echo: bg', 'ok'],
      events: ['metadata', 'values', 'values', 'values'],
      status: 'success',
    });
  });

  pythonTest("the Python client joins a thread's stream from its start and sees each run begin and end", () => {
    const result = runPython(`
thread = await client.threads.create()
run = await client.runs.wait(thread["thread_id"], "agent", input={"messages": [{"role": "user", "content": "watched"}]})
seen = []
async for part in await client.threads.join_stream(thread["thread_id"], last_event_id="-", stream_mode=["lifecycle"]):
    seen.append({"event": part.event, "data": part.data})
    if part.data.get("status") == "run_done":
        break
return seen`);
    expect(result).toEqual([
      { event: 'metadata', data: { run_id: expect.any(String), attempt: 1 } },
      { event: 'metadata', data: { status: 'run_done', run_id: result[0].data.run_id } },
    ]);
  });

  pythonTest('the Python client cancels a running background run and waits for it to stop', () => {
    const result = runPython(`
thread = await client.threads.create()
run = await client.runs.create(thread["thread_id"], "slow", input={"messages": [{"role": "user", "content": "stop"}]})
await asyncio.sleep(0.5)
await client.runs.cancel(thread["thread_id"], run["run_id"], wait=True)
stopped = await client.runs.get(thread["thread_id"], run["run_id"])
after = await client.threads.get(thread["thread_id"])
return {"status": stopped["status"], "thread": after["status"]}`);
    expect(result).toEqual({ status: 'interrupted', thread: 'idle' });
  });

  pythonTest('the Python client puts, gets, searches, lists and deletes store items', () => {
    const result = runPython(`
await client.store.put_item(["py", "prefs"], "theme", {"color": "green"})
await client.store.put_item(["py", "notes"], "n1", {"text": "hello"})
item = await client.store.get_item(["py", "prefs"], "theme")
found = await client.store.search_items(["py"], filter={"color": "green"})
spaces = await client.store.list_namespaces(prefix=["py"])
await client.store.delete_item(["py", "prefs"], "theme")
gone = await client.store.search_items(["py", "prefs"])
return {"value": item["value"], "found": [i["key"] for i in found["items"]], "spaces": sorted(spaces["namespaces"]), "gone": gone["items"]}`);
    expect(result).toEqual({
      value: { color: 'green' },
      found: ['theme'],
      spaces: [
        ['py', 'notes'],
        ['py', 'prefs'],
      ],
      gone: [],
    });
  });

  pythonTest('the Python client creates, versions, finds, draws and deletes assistants', () => {
    const result = runPython(`
created = await client.assistants.create("agent", config={"configurable": {"tone": "dry"}}, metadata={"owner": "py"}, name="py-dry")
updated = await client.assistants.update(created["assistant_id"], metadata={"owner": "py", "v": 2}, name="py-dry-2")
versions = await client.assistants.get_versions(created["assistant_id"])
await client.assistants.set_latest(created["assistant_id"], 1)
latest = await client.assistants.get(created["assistant_id"])
found = await client.assistants.search(metadata={"owner": "py"})
count = await client.assistants.count(metadata={"owner": "py"})
graph = await client.assistants.get_graph(created["assistant_id"])
schemas = await client.assistants.get_schemas(created["assistant_id"])
await client.assistants.delete(created["assistant_id"])
left = await client.assistants.search(metadata={"owner": "py"})
return {
    "created": [created["graph_id"], created["version"], created["name"]],
    "updated": [updated["version"], updated["name"]],
    "versions": sorted(v["version"] for v in versions),
    "latest": [latest["version"], latest["name"]],
    "found": [a["assistant_id"] for a in found] == [created["assistant_id"]],
    "count": count,
    "has_nodes": len(graph["nodes"]) > 0,
    "schema_graph": schemas["graph_id"],
    "left": left,
}`);
    expect(result).toEqual({
      created: ['agent', 1, 'py-dry'],
      updated: [2, 'py-dry-2'],
      versions: [1, 2],
      latest: [1, 'py-dry'],
      found: true,
      count: 1,
      has_nodes: true,
      schema_graph: 'agent',
      left: [],
    });
  });

  pythonTest('the Python client creates, searches, updates and deletes crons, and a per-second cron on a thread fires', () => {
    const result = runPython(`
thread = await client.threads.create()
yearly = await client.crons.create("agent", schedule="0 0 1 1 *", input={"messages": [{"role": "user", "content": "new year"}]}, metadata={"from": "py"})
ticking = await client.crons.create_for_thread(thread["thread_id"], "agent", schedule="* * * * * *", input={"messages": [{"role": "user", "content": "tick"}]})
found = await client.crons.search(assistant_id="agent", metadata={"from": "py"})
counted = await client.crons.count(thread_id=thread["thread_id"])
moved = await client.crons.update(yearly["cron_id"], schedule="0 12 1 1 *")
runs = []
for _ in range(50):
    runs = await client.runs.list(thread["thread_id"])
    if any(r["status"] == "success" for r in runs):
        break
    await asyncio.sleep(0.2)
await client.crons.delete(ticking["cron_id"])
await client.crons.delete(yearly["cron_id"])
left = await client.crons.search(metadata={"from": "py"})
return {
    "found": [c["cron_id"] for c in found] == [yearly["cron_id"]],
    "counted": counted,
    "moved": [moved["schedule"], moved["next_run_date"][11:16]],
    "fired": any(r["status"] == "success" for r in runs),
    "left": left,
}`);
    expect(result).toEqual({ found: true, counted: 1, moved: ['0 12 1 1 *', '12:00'], fired: true, left: [] });
  });

  pythonTest(
    'the Python client: a stream left without on_disconnect keeps running, and a second submit to the busy thread is queued after it',
    () => {
      const result = runPython(`
thread = await client.threads.create()
tid = thread["thread_id"]
async for part in client.runs.stream(tid, "slow", input={"messages": [{"role": "user", "content": "first"}]}):
    break  # the client goes away after the metadata event, as a closed tab does
second = await client.runs.wait(tid, "agent", input={"messages": [{"role": "user", "content": "second"}]})
runs = await client.runs.list(tid)
return {"texts": [m["content"] for m in second["messages"]], "statuses": [r["status"] for r in runs]}`);
      // The slow run finished ("done") before the queued one answered "second".
      expect(result).toEqual({ texts: ['first', 'done', 'second', 'echo: second', 'ok'], statuses: ['success', 'success'] });
    },
  );
});
