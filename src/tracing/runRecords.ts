/**
 * Run records a deployed app sends (POST /internal/v1/runs) become rows of its deployment's tracing project:
 * latency computed here, inputs and outputs kept as JSON text of at most 64 KiB (CONTRACT §2.4).
 */
import Joi from 'joi';
import type { Db } from '../db/knex';
import { TracingRepository, type TracingRunRow } from '../db/repositories/tracing';

export const MAX_PAYLOAD_BYTES = 64 * 1024;
export const MAX_RUNS_PER_REQUEST = 500;

export interface IncomingRunRecord {
  run_id: string;
  thread_id?: string | null;
  assistant_id?: string | null;
  status: string;
  start_time: string;
  end_time?: string | null;
  error?: string | null;
  inputs?: unknown;
  outputs?: unknown;
}

// Years PostgreSQL's timestamptz and JavaScript's Date both hold; the latency between them fits latency_ms (bigint).
const runTime = Joi.date().iso().min('1970-01-01T00:00:00Z').max('9999-12-31T23:59:59Z').raw();

export const runRecordsBody = Joi.object({
  runs: Joi.array()
    .items(
      Joi.object({
        run_id: Joi.string().guid().required(),
        thread_id: Joi.string().max(64).allow(null),
        assistant_id: Joi.string().max(200).allow(null),
        status: Joi.string().max(32).required(),
        start_time: runTime.required(),
        end_time: runTime.allow(null),
        error: Joi.string().allow(null, ''),
        inputs: Joi.any(),
        outputs: Joi.any(),
      }).unknown(true),
    )
    .max(MAX_RUNS_PER_REQUEST)
    .required(),
});

/** JSON text of `value`, cut to `MAX_PAYLOAD_BYTES` (a cut text is no longer valid JSON, and is shown as text). */
export function truncatedJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const json = typeof value === 'string' ? value : JSON.stringify(value);
  if (Buffer.byteLength(json) <= MAX_PAYLOAD_BYTES) return json;
  return Buffer.from(json).subarray(0, MAX_PAYLOAD_BYTES).toString('utf8');
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
    error: record.error ? record.error.slice(0, MAX_PAYLOAD_BYTES) : null,
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
