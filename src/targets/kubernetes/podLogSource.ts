/**
 * A deployment's app output on Kubernetes, read from its pods when the API is asked (docs/decisions.md, "App logs on
 * Kubernetes: read from the pods on request"). The kubelets keep what the containers printed; the API server proxies
 * `pods/<pod>/log` to them. Lines of every agent-server container (API and queue pods) are merged by the kubelet's
 * nanosecond timestamps, which also make the line ids, so a page reads as on the local runners: oldest first by
 * default, `offset` lines skipped, ids increasing in the order the lines were written. A pod whose output cannot be
 * read (gone since the list, not started, its node not answering) becomes one `error` line saying so.
 */
import { logger } from '@graphx/kit/logger';
import type { LogLine } from '../../db/repositories/revisions';
import type { AppLogPage, AppLogSource } from '../target';
import { KubeApiError, type KubeApi } from './kubeApi';
import { LABELS } from './names';
import type { KubeObject } from './objects';
import { APP_CONTAINER } from './objects/workload';

/** At most this much of a pod's log is read for one page (a kubelet rotates at 10 MiB by default). */
export const POD_LOG_READ_LIMIT_BYTES = 4 * 1024 * 1024;

/** How far back a newest-first read goes to make a run of lines of one time whole (a pathological run stays cut). */
const TIE_READ_LIMIT_LINES = 50_000;

interface TimedLine {
  /** Nanoseconds since the epoch, as 19 digits (fixed width, so they compare as text too). */
  nanos: string;
  line: Omit<LogLine, 'id'>;
}

/** `2026-11-24T10:00:00.123456789Z` (RFC 3339, the kubelet trims trailing zeros of the fraction) as nanoseconds. */
export function nanosOf(timestamp: string): string | null {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(timestamp);
  if (!match) return null;
  const millis = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(millis)) return null;
  const nanos = BigInt(millis) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
  return nanos.toString().padStart(19, '0');
}

function parseLines(text: string): TimedLine[] {
  const lines: TimedLine[] = [];
  for (const raw of text.split('\n')) {
    const match = /^(\S+) ?(.*)$/.exec(raw);
    const nanos = match ? nanosOf(match[1] as string) : null;
    if (!match || !nanos) continue;
    const timestamp = new Date(Number(BigInt(nanos) / 1_000_000n)).toISOString();
    lines.push({ nanos, line: { timestamp, level: 'info', message: match[2] as string } });
  }
  return lines;
}

function notice(message: string): TimedLine {
  const now = Date.now();
  return {
    nanos: (BigInt(now) * 1_000_000n).toString().padStart(19, '0'),
    line: { timestamp: new Date(now).toISOString(), level: 'error', message },
  };
}

/** Why a pod's output could not be read, in words for the app's owner (no node address: that is the cluster's). */
function unreadable(pod: string, error: unknown): string {
  if (error instanceof KubeApiError && error.status === 404) return `graphx: pod ${pod} is gone; its output went with it.`;
  if (error instanceof KubeApiError && error.status === 400) {
    return `graphx: pod ${pod} has no output to read: ${error.message.replace(/^GET \S+: /, '')}`;
  }
  const status = error instanceof KubeApiError ? ` (HTTP ${error.status})` : '';
  return `graphx: the output of pod ${pod} could not be read: its node did not answer${status}.`;
}

export class PodLogSource implements AppLogSource {
  constructor(
    private readonly api: KubeApi,
    private readonly namespaces: readonly string[],
  ) {}

  async appLogs(deploymentId: string, page: AppLogPage): Promise<LogLine[]> {
    const timed: TimedLine[] = [];
    for (const namespace of this.namespaces) timed.push(...(await this.namespaceLines(namespace, deploymentId, page)));
    // Stable: lines of one time keep their pod's order and then their order within the pod.
    timed.sort((a, b) => (a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0));
    // Lines a kubelet read in one chunk share a time: the ones after the first get a fixed-width tie counter.
    let ties = 0;
    const lines = timed.map(({ nanos, line }, index) => {
      ties = index > 0 && timed[index - 1]?.nanos === nanos ? ties + 1 : 0;
      return { id: ties === 0 ? nanos : `${nanos}.${String(ties).padStart(6, '0')}`, ...line };
    });
    if (page.order === 'desc') lines.reverse();
    return lines.slice(page.offset, page.offset + page.limit);
  }

  /**
   * Oldest first: the pod's log from its start. Newest first: its newest offset+limit lines (no more can reach the
   * page), read further back while the oldest line read shares its time with the next, so a run of lines of one time
   * is whole and numbers its ties as an oldest-first read does. Both at most POD_LOG_READ_LIMIT_BYTES.
   */
  private async podLines(namespace: string, pod: string, page: AppLogPage): Promise<TimedLine[]> {
    const read = async (tailLines?: number) =>
      parseLines(
        await this.api.podLog(namespace, pod, APP_CONTAINER, {
          tailLines,
          limitBytes: POD_LOG_READ_LIMIT_BYTES,
          timestamps: true,
        }),
      );
    if (page.order === 'asc') return read();
    for (let wanted = page.offset + page.limit; ; wanted *= 2) {
      // One line more than wanted: it shows whether the oldest wanted line starts its run of one time.
      const lines = await read(wanted + 1);
      if (lines.length <= wanted) return lines;
      if (lines[0]?.nanos !== lines[1]?.nanos || wanted >= TIE_READ_LIMIT_LINES) return lines.slice(1);
    }
  }

  private async namespaceLines(namespace: string, deploymentId: string, page: AppLogPage): Promise<TimedLine[]> {
    let pods: KubeObject[];
    try {
      pods = await this.api.list('v1', 'Pod', namespace, { labelSelector: `${LABELS.deployment}=${deploymentId}` });
    } catch (error) {
      logger.warn({ err: error, deploymentId, namespace }, 'could not list the pods of a deployment for its app logs');
      return [notice(`graphx: the cluster did not list the deployment's pods in namespace ${namespace}; retry shortly.`)];
    }
    const apps = pods.filter((pod) => ['api', 'queue'].includes(pod.metadata.labels?.[LABELS.component] ?? ''));
    const perPod = await Promise.all(
      apps.map(async (pod) => {
        const name = pod.metadata.name;
        if (!(pod.spec as { nodeName?: string } | undefined)?.nodeName) return []; // Not on a node yet: no output.
        try {
          return await this.podLines(namespace, name, page);
        } catch (error) {
          logger.warn({ err: error, deploymentId, namespace, pod: name }, 'could not read the output of a pod');
          return [notice(unreadable(name, error))];
        }
      }),
    );
    return perPod.flat();
  }
}
