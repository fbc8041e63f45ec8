/**
 * Waits for a revision to settle through the long-poll form of GET revision (each change arrives within a second,
 * without a poll loop), following its log lines when the output mode shows them. Ctrl-C stops the wait, never the
 * revision. The exit code comes from the final status (see exitCodes.ts).
 */
import type { ApiClient } from './apiClient';
import { EXIT, exitCodeOfStatus } from '@graphx/contract/exitCodes';
import { CliError } from './cliError';
import { formatElapsed, HEARTBEAT_MS, type Reporter } from './reporter';

export interface RevisionBody {
  id: string;
  deployment_id: string;
  status: string;
  status_message: string | null;
}

interface LogPage {
  logs: Array<{ timestamp: string; message: string }>;
}

/** The long poll is held at most this long, so a dead connection is noticed and the deadline kept. */
const LONG_POLL_S = 25;
const LOG_POLL_MS = 1000;
const FAILURE_TAIL_LINES = 30;

const STEP_OF_STATUS: Record<string, string> = {
  CREATING: 'queue',
  QUEUED: 'queue',
  AWAITING_BUILD: 'build',
  BUILDING: 'build',
  AWAITING_DEPLOY: 'deploy',
  DEPLOYING: 'deploy',
};

export function waitCommand(revisionId: string, deploymentId: string): string {
  return `graphx wait ${revisionId} --deployment ${deploymentId}`;
}

/**
 * Waits until the revision settles or `timeoutMs` passes, reports the outcome, and returns the exit code.
 * `url` of the result is the deployment's URL once DEPLOYED.
 */
export async function waitForRevision(
  client: ApiClient,
  reporter: Reporter,
  target: { deploymentId: string; revisionId: string; timeoutMs: number },
): Promise<number> {
  const { deploymentId, revisionId } = target;
  const base = `/v2/deployments/${deploymentId}/revisions/${revisionId}`;
  const started = Date.now();
  const stop = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    stop.abort();
  };

  let revision = await client.get<RevisionBody>(base);
  process.once('SIGINT', onSigint);
  const progress = trackStatus(reporter, revisionId, started);
  progress.changed(revision.status);
  reporter.startSpinner(revision.status);
  const logs = reporter.wantsLogs ? followLogs(client, reporter, base, () => revision.status, stop.signal) : null;

  try {
    await longPollUntilSettled(client, base, revision, { deadline: started + target.timeoutMs, signal: stop.signal }, (next) => {
      revision = next;
      progress.changed(next.status);
    });
  } finally {
    progress.stop();
    process.removeListener('SIGINT', onSigint);
    stop.abort();
    await logs;
  }

  const resume = waitCommand(revisionId, deploymentId);
  if (interrupted) {
    reporter.error(`Stopped waiting; revision ${revisionId} keeps running. Resume with: ${resume}`, {
      kind: 'interrupted',
      revision_id: revisionId,
      deployment_id: deploymentId,
      command: resume,
    });
    return EXIT.interrupted;
  }
  const code = exitCodeOfStatus(revision.status);
  if (code === null) {
    reporter.error(
      `Timed out after ${formatElapsed(Date.now() - started)} with revision ${revisionId} ${revision.status}; ` +
        `it keeps running. Wait again with: ${resume}`,
      { kind: 'timeout', status: revision.status, revision_id: revisionId, deployment_id: deploymentId, command: resume },
    );
    reporter.result({ deployment_id: deploymentId, revision_id: revisionId, status: revision.status, url: null }, null);
    return EXIT.timedOut;
  }
  return finish(client, reporter, revision, code);
}

/**
 * Reports each status change (and the pipeline step it starts) and, while nothing changes, a heartbeat every
 * HEARTBEAT_MS so a CI log shows the wait is alive. `stop` ends the heartbeat.
 */
function trackStatus(reporter: Reporter, revisionId: string, started: number) {
  let status = '';
  let step = '';
  let lastChange = Date.now();
  const heartbeat = setInterval(() => {
    if (Date.now() - lastChange >= HEARTBEAT_MS) {
      reporter.heartbeat(status, Date.now() - started);
      lastChange = Date.now();
    }
  }, 1000);
  return {
    changed(next: string): void {
      status = next;
      lastChange = Date.now();
      reporter.statusChange(status, revisionId, Date.now() - started);
      const current = STEP_OF_STATUS[status];
      if (current && current !== step) reporter.step(current, revisionId);
      step = current ?? step;
    },
    stop: () => clearInterval(heartbeat),
  };
}

/**
 * Long-polls GET revision until its status is final, `deadline` passes or `signal` fires; `onChange` is told each new
 * status. Each poll is held at most LONG_POLL_S (and never past the deadline).
 */
async function longPollUntilSettled(
  client: ApiClient,
  base: string,
  first: RevisionBody,
  until: { deadline: number; signal: AbortSignal },
  onChange: (revision: RevisionBody) => void,
): Promise<void> {
  let revision = first;
  while (exitCodeOfStatus(revision.status) === null && !until.signal.aborted) {
    const remainingS = Math.ceil((until.deadline - Date.now()) / 1000);
    if (remainingS <= 0) break;
    const seconds = Math.max(1, Math.min(LONG_POLL_S, remainingS));
    const query = `?wait_for_change_from=${revision.status}&timeout=${seconds}`;
    let next: RevisionBody;
    try {
      next = await client.get<RevisionBody>(`${base}${query}`, until.signal);
    } catch (error) {
      if (until.signal.aborted) break;
      throw error;
    }
    if (next.status !== revision.status) {
      revision = next;
      onChange(next);
    }
  }
}

async function finish(client: ApiClient, reporter: Reporter, revision: RevisionBody, code: number): Promise<number> {
  const ids = { deployment_id: revision.deployment_id, revision_id: revision.id };
  if (code === EXIT.deployed) {
    const deployment = await client.get<{ url: string | null }>(`/v2/deployments/${revision.deployment_id}`);
    reporter.result({ ...ids, status: revision.status, url: deployment.url }, deployment.url);
    return code;
  }
  if (code === EXIT.skipped) {
    reporter.error(`Revision ${revision.id} was SKIPPED: ${revision.status_message ?? 'a newer revision replaced it.'}`, {
      kind: 'skipped',
      ...ids,
    });
  } else {
    const base = `/v2/deployments/${revision.deployment_id}/revisions/${revision.id}`;
    const tail = await client.get<LogPage>(`${base}/logs?order=desc&limit=${FAILURE_TAIL_LINES}`);
    reporter.error(`Revision ${revision.id} ended ${revision.status}: ${revision.status_message ?? ''}`.trim(), {
      kind: 'failed',
      status: revision.status,
      ...ids,
    });
    const seeAll = `graphx logs ${revision.deployment_id} --revision ${revision.id} --type build`;
    reporter.failureLog(
      tail.logs.reverse().map((line) => line.message),
      seeAll,
    );
  }
  reporter.result({ ...ids, status: revision.status, url: null }, null);
  return code;
}

/** Fetches new log lines about once a second until `signal` fires, then once more so none is missed. */
async function followLogs(
  client: ApiClient,
  reporter: Reporter,
  base: string,
  status: () => string,
  signal: AbortSignal,
): Promise<void> {
  let offset = 0;
  const fetchNew = async () => {
    for (;;) {
      const page = await client.get<LogPage>(`${base}/logs?order=asc&limit=1000&offset=${offset}`);
      for (const line of page.logs) reporter.log(line.message, line.timestamp, status());
      offset += page.logs.length;
      if (page.logs.length < 1000) return;
    }
  };
  try {
    while (!signal.aborted) {
      await fetchNew();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LOG_POLL_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
    await fetchNew();
  } catch (error) {
    // Logs are a courtesy while waiting; the status wait reports an unreachable API itself.
    if (!(error instanceof CliError)) throw error;
  }
}
