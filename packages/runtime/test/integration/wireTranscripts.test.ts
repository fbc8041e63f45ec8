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
 * The same tests run over the echo app's Python twin against the same golden files; there both sides also pass through
 * the table of what the two LangGraph libraries give differently (support/pythonWireDifferences.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  createTestDatabase,
  fixtureIn,
  graphLanguages,
  RUNTIME_START_MS,
  startDevRuntime,
  type GraphLanguage,
  type RuntimeProcess,
} from './support/runtimeHarness';
import { asPythonLibrariesGive, type SseFrame } from './support/pythonWireDifferences';

const GOLDEN = path.join(__dirname, 'golden');
const hi = { messages: [{ role: 'user', content: 'hi' }] };

const HOST_KEYS = ['created_by', 'langgraph_version', 'langgraph_plan', 'langgraph_host', 'langgraph_api_url'];
// uuids, and the 32-hex-digit ids LangGraph gives interrupts
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b/g;

/** The frames of an SSE body (comments left out), each line as `[field, value]`, `data` parsed with timestamps 0. */
function parseFrames(body: string): SseFrame[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.trim() !== '' && !frame.startsWith(':'))
    .map((frame) =>
      frame.split('\n').map((line): [string, any] => {
        if (!line.includes(': ')) return [line, undefined];
        const field = line.slice(0, line.indexOf(': '));
        const value = line.slice(line.indexOf(': ') + 2);
        if (field !== 'data') return [field, value];
        return [field, JSON.parse(value, (key, item) => (key === 'timestamp' && typeof item === 'number' ? 0 : item))];
      }),
    );
}

/** `body` normalised (see the file's comment); a Python run's and its golden with the libraries' differences made alike. */
function normalise(body: string, language: GraphLanguage): string {
  const ids = new Map<string, number>();
  let firstSeq: number | null = null;
  const parsed = parseFrames(body);
  const frames = (language === 'python' ? asPythonLibrariesGive(parsed) : parsed).map((frame) =>
    frame
      .map(([field, value]) => {
        if (field === 'id' && /^\d+$/.test(value)) {
          firstSeq ??= Number(value);
          return `id: ${Number(value) - firstSeq}`;
        }
        if (value === undefined) return field;
        if (field !== 'data') return `${field}: ${value}`;
        const data = value;
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

async function post(runtimeUrl: string, pathname: string, body: unknown): Promise<string> {
  const response = await fetch(`${runtimeUrl}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  return response.text();
}

/** `body` is the golden transcript `file` (recorded from a JavaScript graph; `GOLDEN_WRITE` rewrites it from one). */
function expectGolden(file: string, body: string, language: GraphLanguage): void {
  const goldenPath = path.join(GOLDEN, file);
  if (process.env.GOLDEN_WRITE && language === 'javascript' && file.startsWith('protocol/')) fs.writeFileSync(goldenPath, body);
  expect(normalise(body, language)).toBe(normalise(fs.readFileSync(goldenPath, 'utf8'), language));
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

/** A protocol run on a new thread, its events on `channels` until the root lifecycle ends it. */
async function protocolTranscript(runtimeUrl: string, channels: string[], assistant: string, content: string): Promise<string> {
  const threadId = crypto.randomUUID();
  const started = await fetch(`${runtimeUrl}/threads/${threadId}/commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 1,
      method: 'run.start',
      params: { assistant_id: assistant, input: { messages: [{ role: 'user', content, id: 'human-1' }] } },
    }),
  });
  const { result } = (await started.json()) as { result: { run_id: string } };
  await fetch(`${runtimeUrl}/threads/${threadId}/runs/${result.run_id}/join`);
  // The run is over: a stream from its start replays it whole and is cut after its last event.
  const abort = new AbortController();
  const response = await fetch(`${runtimeUrl}/threads/${threadId}/stream/events`, {
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

describe.each(graphLanguages())('%s graphs', (language: GraphLanguage) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    database = await createTestDatabase('wire');
    runtime = await startDevRuntime(fixtureIn('runtime-echo', language), database.url);
  }, RUNTIME_START_MS + 30_000);

  afterAll(async () => {
    await runtime?.stop();
    await database?.drop();
  });

  test.each(legacy)('stream mode %s: the threadless stream is the reference transcript', async (name, mode) => {
    const body = await post(runtime.url, '/runs/stream', {
      assistant_id: 'agent',
      input: hi,
      ...(mode === undefined ? {} : { stream_mode: mode }),
    });
    expectGolden(`legacy/${name}.sse`, body, language);
  });

  test('stream mode updates on a thread: the reference transcript with its id lines', async () => {
    const thread = (await (await fetch(`${runtime.url}/threads`, { method: 'POST', body: '{}' })).json()) as {
      thread_id: string;
    };
    const body = await post(runtime.url, `/threads/${thread.thread_id}/runs/stream`, {
      assistant_id: 'agent',
      input: hi,
      stream_mode: 'updates',
    });
    expectGolden('legacy/thread-updates.sse', body, language);
  });

  test('stream mode custom: what the node wrote, after metadata', async () => {
    const body = await post(runtime.url, '/runs/stream', { assistant_id: 'agent', input: hi, stream_mode: 'custom' });
    expect(normalise(body, language)).toBe(
      'event: metadata\ndata: {"run_id":"<uuid:1>","attempt":1}\n\nevent: custom\ndata: {"progress":"agent"}',
    );
  });

  test.each(channels)(
    'protocol channel %s: the event stream is the golden transcript',
    async (name, wanted, assistant, content) => {
      expectGolden(`protocol/${name}.sse`, await protocolTranscript(runtime.url, wanted, assistant, content), language);
    },
  );
});
