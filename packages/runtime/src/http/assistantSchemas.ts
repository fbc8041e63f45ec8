/**
 * Request schemas of the assistant routes, with the anchor's field names. Unknown fields are accepted and ignored,
 * so clients of newer SDK versions keep working.
 */
import Joi from 'joi';
import { ASSISTANT_SORT_FIELDS } from '../storage/assistantStore';

const jsonObject = Joi.object().unknown(true);
const name = Joi.string().max(1000);
const description = Joi.string().max(10_000).allow('', null);
const selectable = [...ASSISTANT_SORT_FIELDS, 'config', 'context', 'metadata', 'version', 'description'];
const page = {
  limit: Joi.number().integer().min(1).max(1000).default(10),
  offset: Joi.number().integer().min(0).default(0),
};

export const assistantPathParams = Joi.object({ assistantId: Joi.string().min(1).max(200).required() });

export const assistantSubgraphParams = Joi.object({
  assistantId: Joi.string().min(1).max(200).required(),
  namespace: Joi.string().max(1000),
});

export const assistantCreateBody = Joi.object({
  assistant_id: Joi.string().guid(),
  graph_id: Joi.string().min(1).max(200).required(),
  config: jsonObject.allow(null),
  context: jsonObject.allow(null),
  metadata: jsonObject.allow(null),
  if_exists: Joi.string().valid('raise', 'do_nothing').default('raise'),
  name: name.allow('', null),
  description,
}).unknown(true);

export const assistantPatchBody = Joi.object({
  graph_id: Joi.string().min(1).max(200),
  config: jsonObject.allow(null),
  context: jsonObject.allow(null),
  metadata: jsonObject.allow(null),
  name: name.allow(null),
  description,
})
  .unknown(true)
  .default();

const queryFields = {
  graph_id: Joi.string().max(200).allow(null),
  name: name.allow(null),
  metadata: jsonObject.allow(null),
};

export const assistantSearchBody = Joi.object({
  ...queryFields,
  ...page,
  sort_by: Joi.string()
    .valid(...ASSISTANT_SORT_FIELDS)
    .default('created_at'),
  sort_order: Joi.string().valid('asc', 'desc').default('desc'),
  select: Joi.array()
    .items(Joi.string().valid(...selectable))
    .min(1),
})
  .unknown(true)
  .default();

export const assistantCountBody = Joi.object(queryFields).unknown(true).default();

export const assistantVersionsBody = Joi.object({ ...page, metadata: jsonObject.allow(null) })
  .unknown(true)
  .default();

/** The SDK sends `{version}` as the body; the 2026 API also documents `?version=`. */
export const assistantLatestInput = Joi.object({ version: Joi.number().integer().min(1).required() }).unknown(true);

export const assistantGraphQuery = Joi.object({
  xray: Joi.alternatives(Joi.boolean(), Joi.number().integer().min(0).max(100)),
}).unknown(true);

export const assistantSubgraphsQuery = Joi.object({ recurse: Joi.boolean() }).unknown(true);
