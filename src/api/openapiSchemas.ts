/** Joi building blocks the route declarations share for their OpenAPI answers. */
import Joi from 'joi';

/** `{ resources: [item…], offset }`: the paging envelope of every list answer (offset: where the next page starts). */
export function pageOf(item: Joi.ObjectSchema, description: string): Joi.ObjectSchema {
  const example = item.describe().examples?.[0];
  const page = Joi.object({
    resources: Joi.array().items(item).required(),
    offset: Joi.number().integer().min(0).required().description('Offset of the next page'),
  }).description(description);
  return example === undefined ? page : page.example({ resources: [example], offset: 1 });
}
