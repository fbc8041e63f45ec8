/**
 * The common run body checked without Joi. Joi's validation of every `POST /runs/stream` body was a measurable share
 * of a run's CPU (bench/runtime.ts). This check accepts only bodies whose fields already have their final type
 * (nothing to convert) and returns what Joi would return for them; anything else, valid or not, returns null and goes
 * through `runBody` (schemas.ts), which stays the one definition of what is valid and produces the 422 answers.
 */
import { API_STREAM_MODES } from '../execution/graphStream';

const STREAM_MODES = new Set<unknown>(API_STREAM_MODES);
const ON_DISCONNECT = new Set<unknown>(['cancel', 'continue']);
const MULTITASK = new Set<unknown>(['reject', 'rollback', 'interrupt', 'enqueue']);
const IF_NOT_EXISTS = new Set<unknown>(['reject', 'create']);
const DURABILITY = new Set<unknown>(['sync', 'async', 'exit', null]);
const ON_COMPLETION = new Set<unknown>(['delete', 'keep']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optionalObject = (value: unknown) => value === undefined || value === null || isObject(value);
const optionalOf = (allowed: Set<unknown>, value: unknown) => value === undefined || allowed.has(value);

function validConfig(config: unknown): boolean {
  if (config === undefined || config === null) return true;
  if (!isObject(config) || !optionalObject(config.configurable)) return false;
  const { tags, recursion_limit: recursionLimit } = config;
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string' && tag !== ''))) return false;
  return recursionLimit === undefined || (Number.isSafeInteger(recursionLimit) && (recursionLimit as number) >= 1);
}

function validStreamMode(mode: unknown): boolean {
  if (mode === undefined || STREAM_MODES.has(mode)) return true;
  return Array.isArray(mode) && mode.every((item) => STREAM_MODES.has(item));
}

/** The body as `runBody` would convert it, or null when Joi must decide (including every invalid body). */
export function fastRunBody(body: unknown): Record<string, unknown> | null {
  if (!isObject(body)) return null;
  const ok =
    typeof body.assistant_id === 'string' &&
    body.assistant_id !== '' &&
    optionalObject(body.command) &&
    validConfig(body.config) &&
    optionalObject(body.metadata) &&
    validStreamMode(body.stream_mode) &&
    (body.stream_subgraphs === undefined || typeof body.stream_subgraphs === 'boolean') &&
    optionalOf(ON_DISCONNECT, body.on_disconnect) &&
    optionalOf(MULTITASK, body.multitask_strategy) &&
    optionalOf(IF_NOT_EXISTS, body.if_not_exists) &&
    optionalOf(DURABILITY, body.durability) &&
    optionalOf(ON_COMPLETION, body.on_completion) &&
    (body.checkpoint_during === undefined || body.checkpoint_during === null || typeof body.checkpoint_during === 'boolean') &&
    // Background-run, fork and breakpoint fields are left to Joi (a webhook URL needs checking).
    body.webhook === undefined &&
    body.checkpoint === undefined &&
    body.checkpoint_id === undefined &&
    body.interrupt_before === undefined &&
    body.interrupt_after === undefined &&
    body.after_seconds === undefined;
  if (!ok) return null;
  return { ...body, on_disconnect: body.on_disconnect ?? 'continue' };
}
