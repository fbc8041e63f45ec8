/**
 * The bytes on the wire, per stream mode and per protocol-v2 channel, against golden transcripts (./golden):
 * - legacy/*.sse: the reference's own bodies (reference/peer-sse-samples.md, recorded from the JS server on the same
 *   echo graph as test/fixtures/apps/runtime-echo `agent`), byte for byte once normalised;
 * - protocol/*.sse: protocol-v2 event streams per channel (the framing of the JS server's protocol routes: `event:` the
 *   method, `data:` the whole event, `id:` its seq), checked by hand against `@langchain/protocol`'s types when
 *   written (`GOLDEN_WRITE=1` rewrites them from the server; review the diff).
 * Normalised on both sides: uuids (numbered by first appearance, so equal ids stay equal), timestamps, seqs (from the
 * first event), and in messages-tuple metadata the keys a server adds from its own host (version, plan, host, API URL,
 * created_by), with keys sorted.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createTestDatabase, startDevRuntime, type RuntimeProcess } from './support/runtimeHarness';

const GOLDEN = path.join(__dirname, 'golden');
const hi = { messages: [{ role: 'user', content: 'hi' }] };
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let runtime: RuntimeProcess;

beforeAll(async () => {
  database = await createTestDatabase('wire');
  runtime = await startDevRuntime('runtime-echo', database.url);
});

afterAll(async () => {
  await runtime?.stop();
  await database?.drop();
});

const HOST_KEYS = ['created_by', 'langgraph_version', 'langgraph_plan', 'langgraph_host', 'langgraph_api_url'];
// uuids, and the 32-hex-digit ids LangGraph gives interrupts
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b/g;

function normalise(body: string): string {
  const ids = new Map<string, number>();
  let firstSeq: number | null = null;
  const frames = body
    .split('\n\n')
    .filter((frame) => frame.trim() !== '' && !frame.startsWith(':'))
    .map((frame) =>
      frame
        .split('\n')
        .map((line) => {
          if (line.startsWith('id: ') && /^\d+$/.test(line.slice(4))) {
            firstSeq ??= Number(line.slice(4));
            return `id: ${Number(line.slice(4)) - firstSeq}`;
          }
          if (!line.startsWith('data: ')) return line;
          const data = JSON.parse(line.slice(6), (key, value) => {
            if (key === 'timestamp' && typeof value === 'number') return 0;
            return value;
          });
          // messages-tuple: [message, metadata]
          if (Array.isArray(data) && data.length === 2 && data[1] && typeof data[1] === 'object' && 'langgraph_node' in data[1]) {
            const metadata = data[1] as Record<string, unknown>;
            data[1] = Object.fromEntries(
              Object.keys(metadata)
                .filter((key) => !HOST_KEYS.includes(key))
                .sort()
                .map((key) => [key, metadata[key]]),
            );
          }
          if (data && typeof data === 'object' && 'seq' in data && typeof data.seq === 'number') {
            data.seq -= firstSeq ?? data.seq;
            data.event_id = String(data.seq);
          }
          return `data: ${JSON.stringify(data)}`;
        })
        .join('\n'),
    );
  return frames.join('\n\n').replace(UUID, (id) => {
    if (!ids.has(id)) ids.set(id, ids.size + 1);
    return `<uuid:${ids.get(id)}>`;
  });
}

async function post(pathname: string, body: unknown): Promise<string> {
  const response = await fetch(`${runtime.url}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  return response.text();
}

function expectGolden(file: string, body: string): void {
  const goldenPath = path.join(GOLDEN, file);
  if (process.env.GOLDEN_WRITE && file.startsWith('protocol/')) fs.writeFileSync(goldenPath, body);
  expect(normalise(body)).toBe(normalise(fs.readFileSync(goldenPath, 'utf8')));
}

const legacy: Array<[string, unknown]> = [
  ['updates', 'updates'],
  ['messages', 'messages'],
  ['messages-tuple', 'messages-tuple'],
  ['values', 'values'],
  ['default', undefined],
  ['values+updates+messages-tuple', ['values', 'updates', 'messages-tuple']],
  ['checkpoints', 'checkpoints'],
];

test.each(legacy)('stream mode %s: the threadless stream is the reference transcript', async (name, mode) => {
  const body = await post('/runs/stream', {
    assistant_id: 'agent',
    input: hi,
    ...(mode === undefined ? {} : { stream_mode: mode }),
  });
  expectGolden(`legacy/${name}.sse`, body);
});

test('stream mode updates on a thread: the reference transcript with its id lines', async () => {
  const thread = (await (await fetch(`${runtime.url}/threads`, { method: 'POST', body: '{}' })).json()) as { thread_id: string };
  const body = await post(`/threads/${thread.thread_id}/runs/stream`, {
    assistant_id: 'agent',
    input: hi,
    stream_mode: 'updates',
  });
  expectGolden('legacy/thread-updates.sse', body);
});

test('stream mode custom: what the node wrote, after metadata', async () => {
  expect(normalise(await post('/runs/stream', { assistant_id: 'agent', input: hi, stream_mode: 'custom' }))).toBe(
    'event: metadata\ndata: {"run_id":"<uuid:1>","attempt":1}\n\nevent: custom\ndata: {"progress":"agent"}',
  );
});

/** A protocol run on a new thread, its events on `channels` until the root lifecycle ends it. */
async function protocolTranscript(channels: string[], assistant: string, content: string): Promise<string> {
  const threadId = crypto.randomUUID();
  const started = await fetch(`${runtime.url}/threads/${threadId}/commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 1,
      method: 'run.start',
      params: { assistant_id: assistant, input: { messages: [{ role: 'user', content, id: 'human-1' }] } },
    }),
  });
  const { result } = (await started.json()) as { result: { run_id: string } };
  await fetch(`${runtime.url}/threads/${threadId}/runs/${result.run_id}/join`);
  // The run is over: a stream from its start replays it whole and is cut after its last event.
  const abort = new AbortController();
  const response = await fetch(`${runtime.url}/threads/${threadId}/stream/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ channels }),
    signal: abort.signal,
  });
  const reader = response.body!.getReader();
  let text = '';
  const deadline = setTimeout(() => abort.abort(), 3_000);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
      if (
        /"namespace":\[\],"timestamp":\d+,"data":\{"event":"(completed|interrupted|failed)"/.test(text) ||
        !channels.includes('lifecycle')
      ) {
        // Without lifecycle there is no end mark: what came in the first read of a finished run is the whole run.
        if (channels.includes('lifecycle') || text.endsWith('\n\n')) break;
      }
    }
  } catch {
    // cut by the deadline
  } finally {
    clearTimeout(deadline);
    abort.abort();
  }
  return text;
}

const channels: Array<[string, string[], string, string]> = [
  ['lifecycle', ['lifecycle'], 'agent', 'hi'],
  ['values', ['values', 'lifecycle'], 'agent', 'hi'],
  ['updates', ['updates', 'lifecycle'], 'agent', 'hi'],
  ['messages', ['messages', 'lifecycle'], 'agent', 'hi'],
  ['tasks', ['tasks', 'lifecycle'], 'agent', 'hi'],
  ['checkpoints', ['checkpoints', 'lifecycle'], 'agent', 'hi'],
  ['custom', ['custom', 'lifecycle'], 'agent', 'hi'],
  ['input', ['input', 'lifecycle'], 'interrupting', 'approve?'],
  ['tools', ['tools', 'lifecycle'], 'agent', 'hi'],
];

test.each(channels)(
  'protocol channel %s: the event stream is the golden transcript',
  async (name, wanted, assistant, content) => {
    expectGolden(`protocol/${name}.sse`, await protocolTranscript(wanted, assistant, content));
  },
);
