/**
 * A rollout on the local and container targets (each through its InstanceRunner): start the revision's instances, wait for `GET /ok`, switch the route (one
 * transaction: instances serving, deployment's active revision and url), then drain and stop the old instances.
 *
 * Safe to run twice: it runs under a per-deployment advisory lock; instances of this revision left by an earlier
 * attempt are adopted when their process is alive and really theirs, and stopped otherwise; old instances left
 * `draining` by a crashed attempt are stopped by the next one. Exactly one set of instances ends up running.
 */
import { Client as PgClient } from 'pg';
import type { Db } from '../../db/knex';
import { PipelineState } from '../../db/repositories/pipelineState';
import { DeployFailedError, type RolloutProgress } from '../target';
import type { InstanceRunner } from './instanceRunner';
import { delay } from '@graphx/kit/os/processes';
import { minScale, type RevisionSpec } from '../../pipeline/revisionSpec';
import { InstanceStore, type InstanceRow } from '../../db/repositories/instances';

/** The caller cancelled the rollout while it waited. */
export class RolloutCancelledError extends Error {
  override name = 'RolloutCancelledError';
}

export interface RolloutTimings {
  healthTimeoutMs: number;
  /** Longer than the gateway's route cache, so no gateway still sends new requests to the old instances. */
  routeSettleMs: number;
  /** How long old instances may take to finish their streams after SIGTERM before SIGKILL. */
  drainTimeoutMs: number;
}

/**
 * Runs `fn` holding the deployment's advisory lock. The lock lives on a connection of its own, outside the pool, so
 * holders never starve the pool their own work needs; PostgreSQL releases it if this process dies.
 */
export async function withDeploymentLock<T>(
  connectionString: string,
  deploymentId: string,
  onWait: () => void,
  fn: () => Promise<T>,
): Promise<T> {
  const client = new PgClient({ connectionString });
  client.on('error', () => {}); // A dropped lock connection surfaces as the query error below, not a crash.
  await client.connect();
  try {
    for (;;) {
      const result = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [`graphx-local:${deploymentId}`]);
      if (result.rows[0]?.locked) break;
      onWait();
      await delay(250);
    }
    return await fn();
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Keeps the live instances of `spec`'s revision that are really running (up to min_scale), stops the rest of that
 * revision's records, and starts new instances until min_scale are there. Returns the instances to wait for.
 */
export async function ensureRevisionInstances(
  db: Db,
  instances: InstanceRunner,
  spec: RevisionSpec,
  progress: RolloutProgress,
): Promise<InstanceRow[]> {
  const wanted = minScale(spec);
  const existing = (await new InstanceStore(db).live(spec.deploymentId)).filter((row) => row.revision_id === spec.revisionId);
  const kept: InstanceRow[] = [];
  for (const row of existing) {
    if (kept.length < wanted && (await instances.adoptable(row, spec))) {
      progress.phase('adopting', `Adopting instance on port ${row.port} left by an earlier attempt.`);
      instances.supervise(row);
      kept.push(row);
    } else {
      await instances.stop(row, 0);
    }
  }
  while (kept.length < wanted) {
    const row = await instances.start(spec);
    const pid = row.pid ? ` (pid ${row.pid})` : '';
    progress.phase('starting', `Started instance ${kept.length + 1}/${wanted} on port ${row.port}${pid}.`);
    kept.push(row);
  }
  return kept;
}

/** Waits until every instance answers `GET /ok`; an exit or the timeout is a DeployFailedError with its last lines. */
export async function waitUntilHealthy(
  instances: InstanceRunner,
  rows: InstanceRow[],
  timeoutMs: number,
  progress: RolloutProgress,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(rows);
  while (pending.size > 0) {
    for (const row of [...pending]) {
      if (await instances.isHealthy(row)) {
        pending.delete(row);
        progress.phase('waiting-health', `Instance on port ${row.port} answers GET /ok.`);
      } else if (!(await instances.isAlive(row))) {
        throw new DeployFailedError(failureText('The app exited before answering GET /ok', await instances.lastLines(row)));
      }
    }
    if (pending.size === 0) break;
    if (progress.cancelled?.()) throw new RolloutCancelledError('The rollout was cancelled.');
    if (Date.now() > deadline) {
      const [row] = [...pending];
      throw new DeployFailedError(
        failureText(
          `The app did not answer GET /ok within ${Math.round(timeoutMs / 1000)} s`,
          row ? await instances.lastLines(row) : [],
        ),
      );
    }
    progress.phase('waiting-health');
    await delay(200);
  }
}

/** The route switch: this revision's instances serve, every other live one drains, the deployment points here. */
export async function switchRoute(db: Db, spec: RevisionSpec, rows: InstanceRow[], url: string): Promise<void> {
  await db.transaction(async (trx) => {
    await new InstanceStore(trx).serveOnly(
      spec.deploymentId,
      spec.revisionId,
      rows.map((row) => row.id),
    );
    // DEPLOYED in the same transaction as the route; the workflow records DEPLOYED again when the activity returns
    // (an idempotent write).
    await new PipelineState(trx).markRevisionActive(spec.deploymentId, spec.revisionId, url);
  });
  for (const row of rows) row.status = 'serving';
}

/** Stops the deployment's draining instances after the gateways have let go of them. */
export async function drainOldInstances(
  db: Db,
  instances: InstanceRunner,
  deploymentId: string,
  timings: RolloutTimings,
  progress: RolloutProgress,
): Promise<void> {
  const draining = (await new InstanceStore(db).live(deploymentId)).filter((row) => row.status === 'draining');
  if (draining.length === 0) return;
  progress.phase('draining', `Draining ${draining.length} old instance(s).`);
  await delay(timings.routeSettleMs);
  await Promise.all(draining.map((row) => instances.stop(row, timings.drainTimeoutMs, () => progress.phase('draining'))));
  progress.phase('draining', 'Old instances stopped.');
}

/** The full rollout; returns the deployment URL. */
export async function rolloutRevision(
  lockUrl: string,
  db: Db,
  instances: InstanceRunner,
  spec: RevisionSpec,
  url: string,
  timings: RolloutTimings,
  progress: RolloutProgress,
): Promise<string> {
  return withDeploymentLock(
    lockUrl,
    spec.deploymentId,
    () => progress.phase('waiting-lock'),
    async () => {
      const rows = await ensureRevisionInstances(db, instances, spec, progress);
      try {
        await waitUntilHealthy(instances, rows, timings.healthTimeoutMs, progress);
      } catch (error) {
        // The previous revision keeps serving; the instances that never became healthy go.
        for (const row of rows.filter((r) => r.status === 'starting')) await instances.stop(row, 2000);
        throw error;
      }
      await switchRoute(db, spec, rows, url);
      progress.phase('switched', `Gateway now routes ${spec.deploymentName} to revision ${spec.revisionId}.`);
      await drainOldInstances(db, instances, spec.deploymentId, timings, progress);
      return url;
    },
  );
}

function failureText(what: string, lines: string[]): string {
  return lines.length > 0 ? `${what}. Last output:\n${lines.join('\n')}` : `${what} (it printed nothing).`;
}
