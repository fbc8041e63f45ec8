/**
 * The thread a request acts on is decided once: by the authorized path (`/threads/{id}/...`) or, for a run, by the
 * thread the run was created on. Everything else a request carries (a `checkpoint`, `config.configurable`, a cron's
 * payload, a batch item) may point inside that thread (a checkpoint, a namespace) but never at another one: the
 * LangGraph config that reaches the checkpointer is built here, with `thread_id` written last.
 */
import { ValidationError } from '@graphx/kit/errors';

/** What a request may say about a checkpoint: where inside the thread, never which thread. */
export interface CheckpointRef {
  checkpoint_id?: string;
  checkpoint_ns?: string;
  checkpoint_map?: Record<string, unknown>;
}

/** The keys a `checkpoint` may carry into a config (a `thread_id` there is checked, then dropped). */
const CHECKPOINT_KEYS = ['checkpoint_id', 'checkpoint_ns', 'checkpoint_map'] as const;

/**
 * The checkpoint of a request body, checked against the thread the request acts on. A client may echo a state's
 * `checkpoint` back whole (the Python SDK's `get_state(thread_id, checkpoint=state["checkpoint"])` does, and it
 * holds `thread_id`), so a `thread_id` naming the same thread is accepted and dropped; one naming another thread, or
 * any checkpoint on a threadless run, is a 422 at `loc`.
 */
export function checkpointIn(
  threadId: string | null,
  checkpoint: (CheckpointRef & { thread_id?: unknown }) | null | undefined,
  loc: Array<string | number>,
): CheckpointRef {
  if (!checkpoint) return {};
  if (checkpoint.thread_id !== undefined && checkpoint.thread_id !== null && checkpoint.thread_id !== threadId) {
    const msg = threadId
      ? `A checkpoint can only name the thread the request acts on (${threadId}).`
      : 'A threadless run has no checkpoint to name a thread in.';
    throw new ValidationError([{ loc: [...loc, 'thread_id'], msg, type: 'value_error' }]);
  }
  const ref: CheckpointRef = {};
  for (const key of CHECKPOINT_KEYS) {
    const value = checkpoint[key];
    if (value !== undefined && value !== null) (ref as Record<string, unknown>)[key] = value;
  }
  return ref;
}

/**
 * The `configurable` that points LangGraph at `threadId` (and, with `checkpoint`, at a checkpoint inside it):
 * `base` (the client's or the thread's own keys) first, the checkpoint's three keys over it, `thread_id` last.
 */
export function threadConfigurable(
  base: Record<string, unknown> | null | undefined,
  threadId: string,
  checkpoint: CheckpointRef = {},
): Record<string, unknown> {
  const configurable: Record<string, unknown> = { ...(base ?? {}) };
  for (const key of CHECKPOINT_KEYS) {
    const value = checkpoint[key];
    if (value !== undefined && value !== null) configurable[key] = value;
  }
  configurable.thread_id = threadId;
  return configurable;
}

/** A run body (or a cron's run payload) whose `checkpoint` is checked against `threadId` and keeps only its keys. */
export function scopedToThread<Body extends { checkpoint?: unknown }>(
  body: Body,
  threadId: string | null,
  loc: Array<string | number>,
): Body {
  if (body.checkpoint === undefined || body.checkpoint === null) return body;
  return { ...body, checkpoint: checkpointIn(threadId, body.checkpoint as CheckpointRef, [...loc, 'checkpoint']) };
}
