/**
 * Run records a deployed app sends (POST /internal/v1/runs) become rows of its deployment's tracing project:
 * latency computed here, inputs and outputs kept as JSON text of at most 64 KiB (CONTRACT §2.4); the record's type,
 * validation and truncation rule are the contract's (`@graphx/contract/runRecord`).
 */
import { MAX_PAYLOAD_BYTES, truncatedText, type RunRecord } from '@graphx/contract/runRecord';
import type { Db } from '../db/knex';
import { TracingRepository, type TracingRunRow } from '../db/repositories/tracing';

/** A record as it arrives: the contract's type, its optional fields absent when a sender left them out. */
export type IncomingRunRecord = Pick<RunRecord, 'run_id' | 'status' | 'start_time'> & Partial<RunRecord>;

/** JSON text of `value` as stored: a text the runtime already cut stays as it is, anything over the limit is cut. */
export function truncatedJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return truncatedText(typeof value === 'string' ? value : JSON.stringify(value));
}

function toRow(record: IncomingRunRecord): TracingRunRow {
  const start = new Date(record.start_time);
  const end = record.end_time ? new Date(record.end_time) : null;
  return {
    id: record.run_id,
    threadId: record.thread_id ?? null,
    assistantId: record.assistant_id ?? null,
    status: record.status,
    startTime: start.toISOString(),
    endTime: end?.toISOString() ?? null,
    latencyMs: end ? Math.max(0, end.getTime() - start.getTime()) : null,
    error: record.error ? truncatedText(record.error, MAX_PAYLOAD_BYTES) : null,
    inputsJson: truncatedJson(record.inputs),
    outputsJson: truncatedJson(record.outputs),
  };
}

/** Records runs of `deploymentId` into its tracing project, in one transaction. */
export async function recordDeploymentRuns(db: Db, deploymentId: string, records: IncomingRunRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.transaction(async (trx) => {
    const repository = new TracingRepository(trx);
    const projectId = await repository.projectIdForDeployment(deploymentId);
    await repository.upsertRuns(projectId, records.map(toRow));
    const lastEnd = records
      .map((record) => record.end_time ?? record.start_time)
      .sort()
      .at(-1)!;
    await repository.touchDeployment(deploymentId, new Date(lastEnd).toISOString());
  });
}
