/**
 * Request schemas of the agent-server API, with the field names of the anchors (reference/agent-server.md §2).
 * Unknown fields are accepted and ignored, so clients of newer SDK versions keep working.
 */
import Joi from 'joi';
import { rememberingValidator } from '@graphx/kit/http/validation';
import { isTimezone, scheduleError } from '../execution/cronSchedule';
import { API_STREAM_MODES } from '../execution/graphStream';
import { EXTRACT_PATH, THREAD_FIELDS } from './threadProjection';

const uuid = Joi.string().guid();
const jsonObject = Joi.object().unknown(true);
const streamMode = Joi.string().valid(...API_STREAM_MODES);
const threadStatus = Joi.string().valid('idle', 'busy', 'interrupted', 'error');

/** Static breakpoints of a run: node names, or `*` for every node. */
const breakpoints = Joi.alternatives(Joi.string().valid('*'), Joi.array().items(Joi.string())).allow(null);

export const threadIdParams = Joi.object({ threadId: uuid.required() });

const validThreadPath = rememberingValidator<{ threadId: string }>(threadIdParams, 'path');
/**
 * The thread id of a route's path (`/threads/:threadId…` with no other parameter), validated; the ids of recent
 * requests are remembered, as a client's turns on one thread repeat its id (Joi's guid check was ~0.1 ms a request).
 */
export const threadIdInPath = (params: object): string => validThreadPath(params).threadId;

/**
 * A checkpoint inside the thread a request acts on: these keys and no others (a 422 names any other). `thread_id`
 * is allowed only so that a state's `checkpoint` can be sent back whole; the route checks it names the same thread
 * (execution/threadScope.ts `checkpointIn`).
 */
const checkpointRef = Joi.object({
  checkpoint_id: Joi.string().allow(null),
  checkpoint_ns: Joi.string().allow(''),
  checkpoint_map: jsonObject.allow(null),
  thread_id: Joi.string().allow(null),
}).unknown(false);

export const runBody = Joi.object({
  assistant_id: Joi.string().min(1).required(),
  input: Joi.any().allow(null),
  command: jsonObject.allow(null),
  config: Joi.object({
    configurable: jsonObject.allow(null),
    tags: Joi.array().items(Joi.string()),
    recursion_limit: Joi.number().integer().min(1),
  })
    .unknown(true)
    .allow(null),
  context: Joi.any().allow(null),
  metadata: jsonObject.allow(null),
  stream_mode: Joi.alternatives(streamMode, Joi.array().items(streamMode)),
  stream_subgraphs: Joi.boolean(),
  // The Python server's default for streamed runs (2026): a dropped connection lets the run finish.
  on_disconnect: Joi.string().valid('cancel', 'continue').default('continue'),
  multitask_strategy: Joi.string().valid('reject', 'rollback', 'interrupt', 'enqueue'),
  if_not_exists: Joi.string().valid('reject', 'create'),
  stream_resumable: Joi.boolean(),
  // An absolute http(s) URL, or a path on the app's own server (as the anchor allows).
  webhook: Joi.alternatives(
    Joi.string().uri({ scheme: ['http', 'https'] }),
    Joi.string().pattern(/^\/(?:[^/\\][\s\S]*)?$/, 'path'),
  )
    .allow(null)
    .messages({ 'alternatives.match': '"webhook" must be an http(s) URL or a path starting with "/"' }),
  checkpoint_id: Joi.string(),
  checkpoint: checkpointRef.allow(null),
  interrupt_before: breakpoints,
  interrupt_after: breakpoints,
  durability: Joi.string().valid('sync', 'async', 'exit').allow(null),
  on_completion: Joi.string().valid('delete', 'keep'),
  checkpoint_during: Joi.boolean().allow(null),
  /** Background runs: wait this long before the run may start. */
  after_seconds: Joi.number().min(0).max(31_536_000).allow(null),
}).unknown(true);

/** `POST /runs/batch`: stateless run bodies (keys already snake_case, see backgroundRunRoutes.ts). */
export const runBatchBody = Joi.array().items(runBody).min(1).max(100).required();

const superstep = Joi.object({
  updates: Joi.array()
    .items(Joi.object({ values: Joi.any().allow(null), command: jsonObject.allow(null), as_node: Joi.string().required() }))
    .required(),
});

/** A thread's time to live: `ttl` minutes after its last run, then `strategy` (the Python server's). */
const threadTtl = Joi.object({
  strategy: Joi.string().valid('delete', 'keep_latest').default('delete'),
  ttl: Joi.number().greater(0).max(5_256_000).required(),
}).unknown(true);

export const threadCreateBody = Joi.object({
  thread_id: uuid,
  ttl: threadTtl.allow(null),
  metadata: jsonObject.allow(null).default({}),
  if_exists: Joi.string().valid('raise', 'do_nothing').default('raise'),
  supersteps: Joi.array().items(superstep).allow(null),
})
  .unknown(true)
  .default();

export const threadPruneBody = Joi.object({
  thread_ids: Joi.array().items(uuid).min(1).max(1000).required(),
  strategy: Joi.string().valid('delete', 'keep_latest').default('delete'),
}).unknown(true);

export const threadPatchBody = Joi.object({ metadata: jsonObject, ttl: threadTtl.allow(null) })
  .unknown(true)
  .or('metadata', 'ttl');
export const threadGetQuery = Joi.object({ include: Joi.alternatives(Joi.string(), Joi.array().items(Joi.string())) }).unknown(
  true,
);

const searchFields = {
  metadata: jsonObject.allow(null),
  values: jsonObject.allow(null),
  status: threadStatus,
  ids: Joi.array().items(uuid),
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
  sort_by: Joi.string().valid('thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at').default('created_at'),
  sort_order: Joi.string().valid('asc', 'desc').default('desc'),
  select: Joi.array()
    .items(Joi.string().valid(...THREAD_FIELDS))
    .min(1),
  extract: Joi.object()
    .pattern(Joi.string().pattern(/^\w+$/), Joi.string().pattern(EXTRACT_PATH, 'path like values.messages[-1]'))
    .max(10),
};

// `.default()` (no argument) builds the default from the fields' own defaults: an empty body still gets sort_by & co.
export const threadSearchBody = Joi.object(searchFields).unknown(true).default();
export const threadCountBody = Joi.object({ metadata: searchFields.metadata, values: searchFields.values, status: threadStatus })
  .unknown(true)
  .default();

/** GET /threads: the same filters as POST /threads/search, `metadata`/`values` as JSON text, `ids` comma-separated. */
const jsonObjectText = Joi.string().custom((text: string, helpers) => {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  } catch {
    // answered below
  }
  return helpers.error('object.base');
}, 'JSON object');

export const threadSearchQuery = Joi.object({
  ...searchFields,
  select: Joi.array()
    .items(Joi.string().valid(...THREAD_FIELDS))
    .min(1)
    .single()
    .custom((fields: string[]) => fields.flatMap((field) => field.split(','))),
  metadata: jsonObjectText,
  values: jsonObjectText,
  ids: Joi.string().custom((text: string, helpers) => {
    const ids = text.split(',').filter(Boolean);
    return ids.every((id) => uuid.validate(id).error === undefined) ? ids : helpers.error('string.guid');
  }, 'comma-separated ids'),
}).unknown(true);

export const runListQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
  status: Joi.string().valid('pending', 'running', 'error', 'success', 'timeout', 'interrupted'),
}).unknown(true);

export const threadCheckpointParams = Joi.object({ threadId: uuid.required(), checkpointId: Joi.string().min(1).required() });
export const subgraphsQuery = Joi.object({ subgraphs: Joi.boolean().default(false) }).unknown(true);

export const historyBody = Joi.object({
  limit: Joi.number().integer().min(1).max(1000).default(10),
  // A checkpoint id, a checkpoint, or a config holding one (the JS client sends the last form).
  before: Joi.alternatives(Joi.string(), checkpointRef, Joi.object({ configurable: checkpointRef.required() })).allow(null),
  metadata: jsonObject.allow(null),
  checkpoint: checkpointRef.allow(null),
})
  .unknown(true)
  // No body: the object of its fields' defaults (`.default({})` would skip them: a missing limit became NaN).
  .default();

export const historyQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(1000).default(10),
  before: Joi.string(),
}).unknown(true);

export const stateUpdateBody = Joi.object({
  values: Joi.any().allow(null),
  as_node: Joi.string(),
  checkpoint_id: Joi.string(),
  checkpoint: checkpointRef.allow(null),
}).unknown(true);

export const stateAtCheckpointBody = Joi.object({ checkpoint: checkpointRef.allow(null), subgraphs: Joi.boolean() })
  .unknown(true)
  // No body: the object of its fields' defaults (`.default({})` would skip them: a missing limit became NaN).
  .default();

export const threadRunParams = Joi.object({ threadId: uuid.required(), runId: uuid.required() });
export const runIdParams = Joi.object({ runId: uuid.required() });
export const cancelQuery = Joi.object({
  wait: Joi.boolean().truthy('1').falsy('0').default(false),
  action: Joi.string().valid('interrupt', 'rollback').default('interrupt'),
}).unknown(true);
export const bulkCancelBody = Joi.object({
  thread_id: uuid,
  run_ids: Joi.array().items(uuid),
  status: Joi.string().valid('pending', 'running', 'all'),
  action: Joi.string().valid('interrupt', 'rollback').default('interrupt'),
})
  .unknown(true)
  .or('run_ids', 'status');
export const bulkCancelQuery = Joi.object({ action: Joi.string().valid('interrupt', 'rollback') }).unknown(true);

/** Why the store cannot hold a namespace label faithfully, or null. */
export function namespaceLabelProblem(label: string): string | null {
  if (label === '') return 'Namespace labels cannot be empty.';
  if (label.includes('.')) return `Namespace label ${JSON.stringify(label)} contains a period ('.'), which separates labels.`;
  if (label.includes(':')) {
    return `Namespace label ${JSON.stringify(label)} contains ':': the store joins labels with ':', so it would read back split.`;
  }
  if (/[%_\\]/.test(label)) {
    return `Namespace label ${JSON.stringify(label)} contains a SQL LIKE wildcard ('%', '_') or '\\', which the store refuses.`;
  }
  return null;
}

const namespaceLabel = Joi.string()
  .min(1)
  .custom((label: string, helpers) => {
    const problem = namespaceLabelProblem(label);
    return problem ? helpers.message({ custom: problem }) : label;
  }, 'storable namespace label');
const namespace = Joi.array().items(namespaceLabel).min(1);

export const storePutBody = Joi.object({
  namespace: namespace.required(),
  key: Joi.string().min(1).required(),
  value: jsonObject.required(),
  index: Joi.alternatives(Joi.boolean().valid(false), Joi.array().items(Joi.string())).allow(null),
  ttl: Joi.number().min(0).allow(null),
}).unknown(true);

export const storeItemQuery = Joi.object({
  namespace: Joi.string()
    .min(1)
    .custom((text: string, helpers) => {
      const labels = text.split('.');
      const problem = labels.map(namespaceLabelProblem).find(Boolean);
      return problem ? helpers.message({ custom: problem }) : labels;
    }, 'dot-separated namespace')
    .required(),
  key: Joi.string().min(1).required(),
  refresh_ttl: Joi.boolean(),
}).unknown(true);

export const storeDeleteBody = Joi.object({ namespace: namespace.required(), key: Joi.string().min(1).required() }).unknown(true);

export const storeSearchBody = Joi.object({
  // Empty: every namespace.
  namespace_prefix: Joi.array().items(namespaceLabel).default([]),
  filter: jsonObject.allow(null),
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
  query: Joi.string().allow(null, ''),
  refresh_ttl: Joi.boolean().allow(null),
}).unknown(true);

export const storeNamespacesBody = Joi.object({
  prefix: Joi.array().items(namespaceLabel).allow(null),
  suffix: Joi.array().items(namespaceLabel).allow(null),
  max_depth: Joi.number().integer().min(1).allow(null),
  limit: Joi.number().integer().min(1).max(1000).default(100),
  offset: Joi.number().integer().min(0).default(0),
})
  .unknown(true)
  // No body: the object of its fields' defaults (`.default({})` would skip them: a missing limit became NaN).
  .default();

const cronSchedule = Joi.string()
  .min(1)
  .custom((schedule: string, helpers) => {
    const problem = scheduleError(schedule);
    return problem ? helpers.message({ custom: `"schedule" is not a cron expression: ${problem}` }) : schedule;
  }, 'cron expression');
const timezone = Joi.string().custom(
  (zone: string, helpers) =>
    isTimezone(zone) ? zone : helpers.message({ custom: `"timezone" ${zone} is not an IANA time zone` }),
  'IANA time zone',
);
const cronFields = {
  schedule: cronSchedule,
  timezone: timezone.allow(null),
  end_time: Joi.date().iso().allow(null),
  enabled: Joi.boolean(),
  on_run_completed: Joi.string().valid('delete', 'keep'),
};
export const cronIdParams = Joi.object({ cronId: uuid.required() });
export const cronCreateBody = runBody.keys({ ...cronFields, schedule: cronSchedule.required() });
export const cronPatchBody = runBody.fork('assistant_id', (field) => field.forbidden()).keys(cronFields);
const cronQueryFields = {
  assistant_id: Joi.string(),
  thread_id: uuid,
  enabled: Joi.boolean(),
  metadata: jsonObject.allow(null),
};
export const cronSearchBody = Joi.object({
  ...cronQueryFields,
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
  sort_by: Joi.string()
    .valid('cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date', 'end_time')
    .default('created_at'),
  sort_order: Joi.string().valid('asc', 'desc').default('desc'),
  select: Joi.array().items(Joi.string()),
})
  .unknown(true)
  .default();
export const cronCountBody = Joi.object(cronQueryFields).unknown(true).default();

const modeList = (mode: Joi.Schema) => Joi.alternatives(mode, Joi.array().items(mode));
export const joinStreamQuery = Joi.object({
  cancel_on_disconnect: Joi.boolean().truthy('1').falsy('0').default(false),
  stream_mode: modeList(streamMode),
}).unknown(true);
const threadStreamMode = Joi.string().valid('run_modes', 'lifecycle', 'state_update');
// The JS SDK sends `stream_mode`; the Python server's OpenAPI names it `stream_modes`.
export const threadStreamQuery = Joi.object({
  stream_mode: modeList(threadStreamMode),
  stream_modes: modeList(threadStreamMode),
}).unknown(true);
