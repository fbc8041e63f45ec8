/**
 * The `debug` and `tasks` stream modes as the anchor sends them (its stream.mts `preprocessDebugCheckpoint`): a
 * checkpoint names itself and its parent as the history does (`checkpoint`, `parent_checkpoint`), its parent config is
 * `parent_config`, internal (`__`) configurable keys and callbacks are dropped, and a task whose state is a subgraph's
 * config shows it as `checkpoint`. A client can then match a streamed checkpoint with the thread's history.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{thread_id, checkpoint_id, checkpoint_ns, checkpoint_map}` of a config, null when it names no checkpoint. */
export function checkpointOfConfig(config: unknown, requireId = true): Json | null {
  const configurable = isObject(config) && isObject(config.configurable) ? config.configurable : null;
  if (!configurable || typeof configurable.thread_id !== 'string') return null;
  if (requireId && typeof configurable.checkpoint_id !== 'string') return null;
  return {
    thread_id: configurable.thread_id,
    checkpoint_id: configurable.checkpoint_id ?? null,
    checkpoint_ns: configurable.checkpoint_ns || '',
    checkpoint_map: configurable.checkpoint_map ?? null,
  };
}

function withoutInternalFields(config: unknown): unknown {
  if (!isObject(config) || !isObject(config.configurable)) return config;
  const { callbacks: _callbacks, ...rest } = config;
  const configurable = Object.fromEntries(Object.entries(config.configurable).filter(([key]) => !key.startsWith('__')));
  return { ...rest, configurable };
}

/** A debug task (or `tasks` mode chunk): a subgraph's config in `state` becomes `checkpoint`. */
export function wireDebugTask(task: unknown): unknown {
  if (!isObject(task)) return task;
  const checkpoint = checkpointOfConfig(task.state, false);
  if (!checkpoint) return task;
  const { state: _state, ...rest } = task;
  return { ...rest, checkpoint };
}

/** A debug checkpoint payload (or `checkpoints` mode chunk) as the anchor's StreamCheckpoint. */
export function wireDebugCheckpoint(payload: unknown): unknown {
  if (!isObject(payload)) return payload;
  const { parentConfig, ...rest } = payload;
  return {
    ...rest,
    config: withoutInternalFields(payload.config),
    checkpoint: checkpointOfConfig(payload.config),
    parent_checkpoint: checkpointOfConfig(parentConfig),
    parent_config: withoutInternalFields(parentConfig),
    tasks: Array.isArray(payload.tasks) ? payload.tasks.map(wireDebugTask) : payload.tasks,
  };
}

/** A `debug` stream chunk `{type, step, timestamp, payload}` with its checkpoint or task result as the anchor's. */
export function wireDebugChunk(chunk: unknown): unknown {
  if (!isObject(chunk)) return chunk;
  if (chunk.type === 'checkpoint') return { ...chunk, payload: wireDebugCheckpoint(chunk.payload) };
  if (chunk.type === 'task_result') return { ...chunk, payload: wireDebugTask(chunk.payload) };
  return chunk;
}
