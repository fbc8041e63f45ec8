/**
 * Run records: what a deployed app tells the control plane about each finished run (POST /internal/v1/runs), kept in
 * the deployment's tracing project. One type both ends use, one validation, one rule for payloads too large to keep.
 */
import Joi from 'joi';

/** One finished run, as the runtime sends it. */
export interface RunRecord {
  run_id: string;
  thread_id: string | null;
  assistant_id: string | null;
  status: string;
  start_time: string;
  end_time: string | null;
  error: string | null;
  /** JSON; a text ending in TRUNCATED_MARK when the JSON was over MAX_PAYLOAD_BYTES (see recordPayload). */
  inputs: unknown;
  outputs: unknown;
}

/** Inputs, outputs and errors are kept up to this many bytes of UTF-8. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;
export const MAX_RUNS_PER_REQUEST = 500;
/** Ends a payload cut to MAX_PAYLOAD_BYTES (the cut text, marker included, is no longer JSON: it is shown as text). */
export const TRUNCATED_MARK = '…[truncated]';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The one truncation rule: a JSON text of at most MAX_PAYLOAD_BYTES stays as it is; a longer one is cut so that it,
 * with TRUNCATED_MARK after it, is MAX_PAYLOAD_BYTES at most (a cut inside a character drops that character).
 */
export function truncatedText(text: string, maxBytes = MAX_PAYLOAD_BYTES): string {
  if (text.length <= maxBytes / 4) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  const cut = decoder.decode(bytes.subarray(0, maxBytes - encoder.encode(TRUNCATED_MARK).length)).replace(/\uFFFD+$/, '');
  return `${cut}${TRUNCATED_MARK}`;
}

/** A run's input or output as a record carries it: the JSON value, or its cut text when too large. */
export function recordPayload(json: string): unknown {
  const kept = truncatedText(json);
  return kept === json ? JSON.parse(json) : kept;
}

// Years PostgreSQL's timestamptz and JavaScript's Date both hold; the latency between them fits latency_ms (bigint).
const runTime = Joi.date().iso().min('1970-01-01T00:00:00Z').max('9999-12-31T23:59:59Z').raw();

/** The body of POST /internal/v1/runs. */
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
