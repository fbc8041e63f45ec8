/** graphx.json `http`: the custom app, CORS, the request headers a graph sees, route groups turned off. */
import Joi from 'joi';

/** Route groups `http.disable_<group>` turns off (the anchor's names). */
export const ROUTE_GROUPS = ['assistants', 'threads', 'runs', 'store', 'meta', 'ui', 'mcp'] as const;
export type RouteGroup = (typeof ROUTE_GROUPS)[number];

/** graphx.json `http.cors` (the anchor's keys). */
export interface CorsConfig {
  allow_origins?: string[];
  allow_origin_regex?: string;
  allow_methods?: string[];
  allow_headers?: string[];
  allow_credentials?: boolean;
  expose_headers?: string[];
  max_age?: number;
}

/**
 * graphx.json `http.configurable_headers` (the anchor's keys, `include`/`exclude` accepted too): which request headers
 * a run's graph sees in `config.configurable`; patterns are literal but for `*`.
 */
export interface ConfigurableHeadersConfig {
  includes: string[];
  excludes: string[];
}

/** The `http` key's schema; `exportRef` is graphx.json's `<file>:<export>` text. */
export function httpSchema(exportRef: Joi.StringSchema): Joi.ObjectSchema {
  return Joi.object({
    app: exportRef,
    cors: Joi.object({
      allow_origins: Joi.array().items(Joi.string()),
      allow_origin_regex: Joi.string().custom((pattern: string, helpers) => {
        try {
          new RegExp(pattern);
          return pattern;
        } catch {
          return helpers.message({ custom: '"allow_origin_regex" is not a regular expression' });
        }
      }),
      allow_methods: Joi.array().items(Joi.string()),
      allow_headers: Joi.array().items(Joi.string()),
      allow_credentials: Joi.boolean(),
      expose_headers: Joi.array().items(Joi.string()),
      max_age: Joi.number().integer().min(0),
    }).unknown(true),
    configurable_headers: Joi.object({
      includes: Joi.array().items(Joi.string()),
      include: Joi.array().items(Joi.string()),
      excludes: Joi.array().items(Joi.string()),
      exclude: Joi.array().items(Joi.string()),
    }).unknown(true),
    ...Object.fromEntries(ROUTE_GROUPS.map((group) => [`disable_${group}`, Joi.boolean()])),
  }).unknown(true);
}

/** The `http.configurable_headers` value as include and exclude lists (either spelling of the keys); null when absent. */
export function configurableHeadersOf(value: Record<string, string[] | undefined> | undefined): ConfigurableHeadersConfig | null {
  if (!value) return null;
  return { includes: value.includes ?? value.include ?? [], excludes: value.excludes ?? value.exclude ?? [] };
}
