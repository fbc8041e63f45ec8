/**
 * Protocol-v2 runs beside legacy streams for the same run, in two shapes:
 * - a new thread per run: each client loop takes a new thread and runs the echo graph on it once, either (a) legacy:
 *   `POST /threads/{id}/runs/stream` (`if_not_exists: create`) read to its end, (a') legacy as its `useStream` starts a
 *   thread: `POST /threads`, then `runs/stream` on it, or (b) protocol v2:
 *   `POST /threads/{id}/stream/events` (values, updates, messages, lifecycle) opened, then `run.start` on
 *   `POST /threads/{id}/commands`, read until the root lifecycle ends the run;
 * - a conversation (how the new `useStream` works): each client keeps one thread and runs on it turn after turn;
 *   legacy makes one `runs/stream` request per turn, protocol v2 opens the thread's event stream once and sends one
 *   `run.start` per turn, waiting for that run's root lifecycle end on the open stream.
 * 1, 8 and 32 clients against `graphx dev` (one process), each point in rounds (measureRounds). Prints runs/s, p50
 * whole run and server CPU per run; asserts nothing.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { ROOT, runtimeNode, startProcess, treeCpuMs, type Server } from './runtimeProcess';

const APP_CONFIG = path.join(ROOT, 'test', 'fixtures', 'apps', 'runtime-echo', 'graphx.json');
const SECONDS_PER_POINT = Number(process.env.BENCH_SECONDS ?? 5);
/**
 * Runs of each new-thread kind before its first measured point, so that no kind is measured while its own code paths
 * are still being compiled (the protocol path has code no legacy run warms: at 1 client it paid for that alone).
 */
const WARM_UP_RUNS = 100;
/** Rounds of each point (measureRounds); each figure printed is the median of its rounds. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const input = { messages: [{ role: 'user', content: 'hi' }] };
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ROOT_END = /"namespace":\[\],"timestamp":\d+,"data":\{"event":"(completed|interrupted|failed)"/;

function request(
  agent: http.Agent,
  port: number,
  pathname: string,
  body: unknown,
  onData?: (text: string) => boolean,
  onHeaders?: () => void,
  /** `onData` gets each chunk rather than everything so far (a long-lived stream). */
  chunked = false,
) {
  return new Promise<void>((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (response) => {
        if (response.statusCode !== 200) return reject(new Error(`${pathname}: HTTP ${response.statusCode}`));
        onHeaders?.();
        let seen = '';
        response.on('data', (chunk: Buffer) => {
          seen = chunked ? chunk.toString() : seen + chunk.toString();
          if (onData?.(seen)) {
            response.destroy();
            resolve();
          }
        });
        response.on('end', () => resolve());
        response.on('error', () => resolve());
        response.on('close', () => resolve());
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/**
 * The legacy stream of the same run: `updates` alone (the lightest legacy client), or the modes that carry what the
 * protocol stream below subscribes to (values, updates, messages: `messages-tuple`, as the legacy useStream asks).
 */
const LEGACY_MODES = { updates: 'updates', same: ['values', 'updates', 'messages-tuple'] } as const;
const legacyRun = (agent: http.Agent, port: number, modes: keyof typeof LEGACY_MODES) =>
  request(agent, port, `/threads/${crypto.randomUUID()}/runs/stream`, {
    assistant_id: 'agent',
    input,
    stream_mode: LEGACY_MODES[modes],
    if_not_exists: 'create',
  });

/**
 * The same run as the legacy `useStream` (@langchain/langgraph-sdk/react) makes a thread's first one: `POST /threads`
 * (the hook creates the thread first, react/stream.lgp.js), then `runs/stream` of the same channels on it. The new
 * `useStream` makes the same first turn with two requests as well (its `run.start` creates the thread), so this is the
 * like-for-like pair of what users' clients send; `legacyRun` with `if_not_exists` is the cheaper legacy shape no hook
 * sends, kept as the strictest comparison.
 */
async function legacyHookRun(agent: http.Agent, port: number): Promise<void> {
  let created = '';
  await request(agent, port, '/threads', {}, (seen) => {
    created = seen;
    return false;
  });
  const threadId = (JSON.parse(created) as { thread_id: string }).thread_id;
  await request(agent, port, `/threads/${threadId}/runs/stream`, {
    assistant_id: 'agent',
    input,
    stream_mode: LEGACY_MODES.same,
  });
}

async function protocolRun(agent: http.Agent, streams: http.Agent, port: number): Promise<void> {
  const threadId = crypto.randomUUID();
  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  const ended = request(
    streams,
    port,
    `/threads/${threadId}/stream/events`,
    { channels: ['values', 'updates', 'messages', 'lifecycle'] },
    (seen) => ROOT_END.test(seen),
    opened,
  );
  // The stream's headers come at once (flushed): the run starts once the client knows it is listening.
  await ready;
  await request(agent, port, `/threads/${threadId}/commands`, {
    id: 1,
    method: 'run.start',
    params: { assistant_id: 'agent', input },
  });
  await ended;
}

/** One client's conversation: a thread whose event stream stays open; `turn()` runs once and waits for its end. */
async function openConversation(agent: http.Agent, streams: http.Agent, port: number) {
  const threadId = crypto.randomUUID();
  let waiting: (() => void) | null = null;
  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  let buffer = '';
  const closed = request(
    streams,
    port,
    `/threads/${threadId}/stream/events`,
    { channels: ['values', 'updates', 'messages', 'lifecycle'] },
    (chunk) => {
      // Whole SSE events only; the root lifecycle's end finishes the turn waiting for it.
      buffer += chunk;
      const events = buffer.split('\n\n');
      buffer = events.pop() ?? '';
      for (const event of events) {
        if (ROOT_END.test(event)) {
          const done = waiting;
          waiting = null;
          done?.();
        }
      }
      return false;
    },
    opened,
    true,
  );
  await ready;
  let open = true;
  void closed.then(() => {
    // A stream cut before a turn's end fails that turn rather than leaving it waiting.
    open = false;
    waiting?.();
  });
  return {
    async turn() {
      if (!open) throw new Error(`the event stream of thread ${threadId} closed`);
      const ended = new Promise<void>((resolve) => (waiting = resolve));
      await request(agent, port, `/threads/${threadId}/commands`, {
        id: 1,
        method: 'run.start',
        params: { assistant_id: 'agent', input },
      });
      await ended;
      if (!open) throw new Error(`the event stream of thread ${threadId} closed before its run ended`);
    },
    closed,
  };
}

type Kind = 'legacy' | 'legacy-same' | 'legacy-hook' | 'protocol' | 'legacy-conversation' | 'protocol-conversation';

/** The kinds already warmed up on each server (WARM_UP_RUNS). */
const warmedUp = new WeakMap<Server, Set<Kind>>();

async function measure(server: Server, clients: number, kind: Kind) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  // Streams are cut once the run ended: their sockets are not reused.
  const streams = new http.Agent({ keepAlive: false, maxSockets: clients });
  const conversations = await Promise.all(
    Array.from({ length: clients }, async () => {
      if (kind === 'protocol-conversation') return openConversation(agent, streams, server.port);
      if (kind !== 'legacy-conversation') return null;
      const threadId = crypto.randomUUID();
      const turn = () =>
        request(agent, server.port, `/threads/${threadId}/runs/stream`, {
          assistant_id: 'agent',
          input,
          stream_mode: LEGACY_MODES.same,
          if_not_exists: 'create',
        });
      return { turn, closed: Promise.resolve() };
    }),
  );
  const onceFor = (client: number) => {
    const conversation = conversations[client];
    if (conversation) return conversation.turn();
    if (kind === 'protocol') return protocolRun(agent, streams, server.port);
    if (kind === 'legacy-hook') return legacyHookRun(agent, server.port);
    return legacyRun(agent, server.port, kind === 'legacy' ? 'updates' : 'same');
  };
  // A conversation's turns use the code its new-thread kind warmed, and extra turns would lengthen its threads.
  const warmed = warmedUp.get(server) ?? warmedUp.set(server, new Set()).get(server)!;
  const warmUp = kind.endsWith('conversation') || warmed.has(kind) ? clients : Math.max(clients, WARM_UP_RUNS);
  for (let index = 0; index < warmUp; index += 1) await onceFor(index % clients);
  warmed.add(kind);
  const totals: number[] = [];
  const cpuBefore = treeCpuMs(server.pid);
  const started = performance.now();
  const deadline = started + SECONDS_PER_POINT * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline) {
        const begun = performance.now();
        await onceFor(client);
        totals.push(performance.now() - begun);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = treeCpuMs(server.pid) - cpuBefore;
  agent.destroy();
  streams.destroy();
  await Promise.all(conversations.map((conversation) => conversation?.closed));
  return { runsPerSecond: totals.length / seconds, totalP50: median(totals), cpuPerRun: cpuMs / totals.length };
}

type Measured = Awaited<ReturnType<typeof measure>>;

/**
 * Each kind measured ROUNDS times at `clients`, the kinds' order rotated each round, so that no kind always runs first
 * or last (on the fullest tables, after the others' garbage). Each figure is the median of its rounds; a ratio is the
 * median of the ratios within each round (the two kinds measured minutes apart at most): this machine moves runs/s by
 * ±10 % between runs minutes apart, and one point per kind read that noise as a difference.
 */
async function measureRounds<K extends Kind>(server: Server, clients: number, kinds: K[]) {
  const rounds: Array<Map<K, Measured>> = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const measured = new Map<K, Measured>();
    for (let index = 0; index < kinds.length; index += 1) {
      const kind = kinds[(index + round) % kinds.length]!;
      measured.set(kind, await measure(server, clients, kind));
    }
    rounds.push(measured);
  }
  const of = (kind: K, figure: keyof Measured) => median(rounds.map((measured) => measured.get(kind)![figure]));
  return {
    runsPerSecond: (kind: K) => of(kind, 'runsPerSecond').toFixed(1),
    totalP50: (kind: K) => of(kind, 'totalP50').toFixed(1),
    cpuPerRun: (kind: K) => of(kind, 'cpuPerRun').toFixed(2),
    /** Median over the rounds of a's runs/s over b's. */
    ratio: (a: K, b: K) =>
      median(rounds.map((measured) => measured.get(a)!.runsPerSecond / measured.get(b)!.runsPerSecond)).toFixed(2),
  };
}

/** Prints the header of a table; the function returned prints a row, each cell right-aligned under its label. */
function table(labels: string[]): (cells: string[]) => void {
  console.log(labels.join('   '));
  return (cells) =>
    console.log(cells.map((cell, index) => cell.padStart(labels[index]!.length + (index === 0 ? 0 : 2))).join(' '));
}

/** Prints legacy and protocol-v2 thread runs side by side. */
export async function benchRuntimeProtocol(givenDatabaseUri?: string): Promise<void> {
  const adminUrl = process.env.GRAPHX_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const databaseName = `gx_bench_v2_${Date.now().toString(36)}`;
  const admin = givenDatabaseUri ? null : new PgClient({ connectionString: adminUrl });
  await admin?.connect();
  await admin?.query(`CREATE DATABASE "${databaseName}"`);
  const databaseUri = givenDatabaseUri ?? adminUrl.replace(/\/[^/]*$/, `/${databaseName}`);
  try {
    await benchOn(databaseUri);
  } finally {
    await admin?.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin?.end();
  }
}

async function benchOn(databaseUri: string): Promise<void> {
  const port = await findFreePort();
  const args = [path.join(ROOT, 'bin', 'graphx.js'), 'dev', '--config', APP_CONFIG, '--port', String(port)];
  const node = await runtimeNode();
  const server = await startProcess(
    'graphx dev',
    node.binary,
    args,
    { DATABASE_URI: databaseUri, GRAPHX_LOG_LEVEL: 'warn' },
    port,
  );
  try {
    console.log(
      `\nthread runs (a new thread each), legacy stream vs protocol v2, ${SECONDS_PER_POINT} s per point and kind, the median of ${ROUNDS} rounds (kinds in rotating order), on ${node.label}`,
    );
    console.log('legacy: stream_mode updates; legacy same: values, updates, messages-tuple (what v2 subscribes to here),');
    console.log('  one request (if_not_exists: create); legacy hook: the same modes as the legacy useStream sends a first turn,');
    console.log('  POST /threads then runs/stream (the new useStream also sends two: the event stream, then run.start)');
    const newThread = table([
      'clients',
      'legacy runs/s',
      'legacy same runs/s',
      'legacy hook runs/s',
      'protocol-v2 runs/s',
      'v2/legacy same',
      'v2/legacy hook',
      'v2/legacy',
      'legacy same p50 ms',
      'v2 p50 ms',
      'legacy same CPU ms/run',
      'v2 CPU ms/run',
    ]);
    for (const clients of [1, 8, 32]) {
      const point = await measureRounds(server, clients, ['legacy', 'legacy-same', 'legacy-hook', 'protocol']);
      newThread([
        String(clients),
        point.runsPerSecond('legacy'),
        point.runsPerSecond('legacy-same'),
        point.runsPerSecond('legacy-hook'),
        point.runsPerSecond('protocol'),
        point.ratio('protocol', 'legacy-same'),
        point.ratio('protocol', 'legacy-hook'),
        point.ratio('protocol', 'legacy'),
        point.totalP50('legacy-same'),
        point.totalP50('protocol'),
        point.cpuPerRun('legacy-same'),
        point.cpuPerRun('protocol'),
      ]);
    }
    console.log(
      '(target: protocol-v2 runs/s at least legacy runs/s for the same run: v2/legacy hook >= 1.00 as the hooks send it; v2/legacy same, the strictest)',
    );
    console.log(
      `\nconversations (one thread per client, a run per turn: legacy values, updates, messages-tuple; protocol v2 on one open event stream), ${SECONDS_PER_POINT} s per point and kind, the median of ${ROUNDS} rounds`,
    );
    const conversation = table([
      'clients',
      'legacy runs/s',
      'protocol-v2 runs/s',
      'v2/legacy',
      'legacy p50 ms',
      'v2 p50 ms',
      'legacy CPU ms/run',
      'v2 CPU ms/run',
    ]);
    for (const clients of [1, 8, 32]) {
      const point = await measureRounds(server, clients, ['legacy-conversation', 'protocol-conversation']);
      conversation([
        String(clients),
        point.runsPerSecond('legacy-conversation'),
        point.runsPerSecond('protocol-conversation'),
        point.ratio('protocol-conversation', 'legacy-conversation'),
        point.totalP50('legacy-conversation'),
        point.totalP50('protocol-conversation'),
        point.cpuPerRun('legacy-conversation'),
        point.cpuPerRun('protocol-conversation'),
      ]);
    }
  } finally {
    await server.stop();
  }
}
