/**
 * The transactional outbox: writer and relay in one module. The API writes (`writeOutboxMessage`) a `pipeline_outbox` row in the same transaction as the revision (or
 * delete) it announces; this relay delivers each row to the deployment workflow with signal-with-start and marks it
 * delivered. If the API dies between its commit and the delivery, the next relay pass (any process) delivers it.
 * Delivery is at-least-once; the workflow ignores a revision id it has seen.
 */
import type { Client } from '@temporalio/client';
import type { Db, DbOrTx } from '../db/knex';
import { logger } from '@graphx/kit/logger';
import { taskQueues } from '../../workflows/messages';
import { signalDeploymentWorkflow, type OutboxMessage } from './deploymentWorkflowClient';

export interface OutboxRelay {
  /** Delivers pending rows now (the API calls it right after its commit, for latency). */
  poke: () => void;
  stop: () => Promise<void>;
}

const BATCH = 20;

/**
 * Writes `message` in the caller's transaction (so it commits with what it announces); poke the relay after.
 * `taskQueuePrefix`: the writing installation's (GRAPHX_TASK_QUEUE_PREFIX), whose control queue the workflow runs on.
 */
export async function writeOutboxMessage(trx: DbOrTx, message: OutboxMessage, taskQueuePrefix: string): Promise<void> {
  await trx('pipeline_outbox').insert({
    deployment_id: message.deploymentId,
    kind: message.kind,
    payload: JSON.stringify(message.payload),
    task_queue: taskQueues(taskQueuePrefix).control,
  });
}

/** Delivers pending rows once; returns how many were delivered. */
export async function deliverPendingOutbox(db: Db, temporal: Client): Promise<number> {
  return db.transaction(async (trx) => {
    // SKIP LOCKED lets several API or worker processes run relays without delivering a row twice at once.
    const rows = await trx('pipeline_outbox').whereNull('delivered_at').orderBy('id').limit(BATCH).forUpdate().skipLocked();
    let delivered = 0;
    for (const row of rows) {
      try {
        await signalDeploymentWorkflow(
          temporal,
          { kind: row.kind, deploymentId: row.deployment_id, payload: row.payload } as OutboxMessage,
          row.task_queue,
        );
        await trx('pipeline_outbox')
          .where({ id: row.id })
          .update({ delivered_at: trx.fn.now(), attempts: row.attempts + 1 });
        delivered += 1;
      } catch (error) {
        await trx('pipeline_outbox')
          .where({ id: row.id })
          .update({ attempts: row.attempts + 1, last_error: String((error as Error).message).slice(0, 2000) });
        logger.warn({ err: error, outboxId: row.id }, 'outbox delivery failed; will retry');
      }
    }
    return delivered;
  });
}

/** Runs the relay: on every poke, and every `intervalMs` as a sweep for anything a crashed process left. */
export function startOutboxRelay(db: Db, temporal: Client, intervalMs = 1000): OutboxRelay {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const pass = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await deliverPendingOutbox(db, temporal);
        } catch (error) {
          logger.warn({ err: error }, 'outbox relay pass failed');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = null;
    });
  };
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  pass();
  return {
    poke: pass,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
