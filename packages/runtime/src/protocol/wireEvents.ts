/**
 * Protocol-v2 events as the wire carries them, read back from the thread's kept run events (RunEventStore): each row a
 * protocol run wrote (`protocol:<method>`, execution/protocolFrames.ts) is one event whose `seq` and `event_id` are the
 * row's id, ordered within the thread and the same on every instance, so `since` resumes a stream anywhere. Also the
 * filters of event streams and subscriptions (channels, namespace prefixes, depth) and the agent tree of a run.
 */
import { protocolMethodOf, type ProtocolParams } from '../execution/protocolFrames';
import type { StoredRunEvent } from '../storage/runEventStore';

export interface WireEvent {
  type: 'event';
  event_id: string;
  seq: number;
  method: string;
  params: ProtocolParams;
}

export interface EventFilter {
  channels: Set<string>;
  namespaces?: string[][];
  depth?: number;
}

export const PROTOCOL_CHANNELS = [
  'values',
  'updates',
  'messages',
  'tools',
  'lifecycle',
  'input',
  'checkpoints',
  'tasks',
  'custom',
];

/** True for a channel the protocol names (`custom:<name>` included). */
export function isChannel(channel: unknown): channel is string {
  return typeof channel === 'string' && (PROTOCOL_CHANNELS.includes(channel) || /^custom:.+/.test(channel));
}

/** The method of a kept row's protocol event; null for a row that is not one (a legacy run's, a run's end mark). */
export function methodOf(row: StoredRunEvent): string | null {
  return protocolMethodOf(row.event);
}

/** The params of a kept row, in the protocol's order whatever order the row has them in. */
function paramsOf(row: StoredRunEvent): ProtocolParams {
  const { namespace, timestamp, node, data } = row.data as ProtocolParams;
  return { namespace, timestamp, ...(node !== undefined ? { node } : {}), data };
}

/**
 * The wire event of a kept row; null for a row that is not a protocol event. Its params are read from the row's data
 * when first used: a follower sending a row's wire text (`wireFrameOf`) through a filter that needs no params reads
 * nothing.
 */
export function wireEventOf(row: StoredRunEvent): WireEvent | null {
  const method = methodOf(row);
  if (method === null) return null;
  let params: ProtocolParams | undefined;
  return {
    type: 'event',
    event_id: row.id,
    seq: Number(row.id),
    method,
    get params() {
      return (params ??= paramsOf(row));
    },
  };
}

/**
 * The wire text of a kept row's event, the bytes `JSON.stringify(wireEventOf(row))` gives, made without reading the
 * row when this instance wrote it (StoredRunEvent.json: the params' wire JSON, execution/protocolFrames.ts
 * `protocolEvent`, whose keys are the wire's in its order); undefined for a row read back.
 */
export function wireFrameOf(row: StoredRunEvent, method: string): string | undefined {
  if (row.json === undefined) return undefined;
  const seq = Number(row.id);
  return `{"type":"event","event_id":"${seq}","seq":${seq},"method":${JSON.stringify(method)},"params":${row.json}}`;
}
/** The channel an event travels on: `input.*` on `input`, a named custom event on `custom:<name>`. */
export function channelOf(event: WireEvent): string {
  if (event.method.startsWith('input.')) return 'input';
  if (event.method === 'custom') {
    const name = (event.params.data as { name?: unknown } | null)?.name;
    return typeof name === 'string' && name !== '' ? `custom:${name}` : 'custom';
  }
  return event.method;
}

/**
 * Whether `namespace` lies under `prefix`. A prefix segment without a task id (`gp_two`) matches the segment with one
 * (`gp_two:<task id>`), since clients name subgraphs by node before they know the task.
 */
export function underPrefix(namespace: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > namespace.length) return false;
  return prefix.every((segment, index) => {
    const actual = namespace[index]!;
    return actual === segment || (!segment.includes(':') && actual.startsWith(`${segment}:`));
  });
}

/** False when no event of `method` can pass the filter (its channel is not subscribed): decided before its data is read. */
export function methodMayMatch(filter: EventFilter, method: string): boolean {
  if (method !== 'custom') return filter.channels.has(method.startsWith('input.') ? 'input' : method);
  return [...filter.channels].some((channel) => channel === 'custom' || channel.startsWith('custom:'));
}

export function matchesFilter(filter: EventFilter, event: WireEvent): boolean {
  const channel = channelOf(event);
  if (!filter.channels.has(channel) && !(channel.startsWith('custom:') && filter.channels.has('custom'))) return false;
  if (!filter.namespaces || filter.namespaces.length === 0) return true;
  const namespace = event.params.namespace ?? [];
  return filter.namespaces.some(
    (prefix) =>
      underPrefix(namespace, prefix) && (filter.depth === undefined || namespace.length - prefix.length <= filter.depth),
  );
}

export interface AgentTreeNode {
  namespace: string[];
  status: string;
  graph_name: string;
  children?: AgentTreeNode[];
}

/** The agent tree of one run, from its events: the root and every namespace seen, with its last lifecycle status. */
export class AgentTree {
  private readonly nodes = new Map<string, { namespace: string[]; status: string; graphName: string }>();

  constructor(private rootName: string) {}

  /** A new run begins: its tree starts empty. */
  reset(): void {
    this.nodes.clear();
  }

  note(event: WireEvent): void {
    const namespace = event.params.namespace ?? [];
    const lifecycle = event.method === 'lifecycle' ? (event.params.data as { event?: string; graph_name?: string }) : null;
    if (namespace.length === 0) {
      if (lifecycle?.graph_name) this.rootName = lifecycle.graph_name;
      if (lifecycle?.event) this.set([], lifecycle.event, this.rootName);
      return;
    }
    for (let length = 1; length < namespace.length; length += 1) {
      const partial = namespace.slice(0, length);
      if (!this.nodes.has(JSON.stringify(partial))) this.set(partial, 'started', nodeName(partial));
    }
    const own = this.nodes.get(JSON.stringify(namespace));
    this.set(
      namespace,
      lifecycle?.event ?? own?.status ?? 'started',
      lifecycle?.graph_name ?? own?.graphName ?? nodeName(namespace),
    );
  }

  tree(namespace: string[] = []): AgentTreeNode {
    const own = this.nodes.get(JSON.stringify(namespace));
    const children = [...this.nodes.values()]
      .filter((node) => node.namespace.length === namespace.length + 1 && underPrefix(node.namespace, namespace))
      .sort((a, b) => JSON.stringify(a.namespace).localeCompare(JSON.stringify(b.namespace)))
      .map((node) => this.tree(node.namespace));
    return {
      namespace,
      status: own?.status ?? 'started',
      graph_name: namespace.length === 0 ? this.rootName : (own?.graphName ?? nodeName(namespace)),
      ...(children.length > 0 ? { children } : {}),
    };
  }

  private set(namespace: string[], status: string, graphName: string): void {
    this.nodes.set(JSON.stringify(namespace), { namespace, status, graphName });
  }
}

function nodeName(namespace: string[]): string {
  return (namespace.at(-1) ?? '').split(':')[0] ?? '';
}
