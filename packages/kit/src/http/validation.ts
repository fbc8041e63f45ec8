/**
 * Joi at the edge, answered in pydantic's shape: `{"detail":[{"loc":["body","name"],"msg":"...","type":"missing"}]}`.
 * The `type` names follow pydantic so clients written against the real control plane read our errors unchanged.
 */
import type Joi from 'joi';
import { ValidationError, type ValidationIssue } from '../errors';
import { BoundedMap } from '../boundedMap';

export type RequestPart = 'body' | 'path' | 'query';

const TYPE_BY_JOI_CODE: Record<string, string> = {
  'any.required': 'missing',
  'string.base': 'string_type',
  'string.empty': 'string_too_short',
  'string.min': 'string_too_short',
  'string.max': 'string_too_long',
  'string.pattern.base': 'string_pattern_mismatch',
  'string.pattern.name': 'string_pattern_mismatch',
  'string.guid': 'uuid_parsing',
  'string.uri': 'url_parsing',
  'string.uriCustomScheme': 'url_scheme',
  'boolean.base': 'bool_parsing',
  'number.integer': 'int_parsing',
  'number.min': 'greater_than_equal',
  'number.max': 'less_than_equal',
  'number.greater': 'greater_than',
  'number.less': 'less_than',
  'number.unsafe': 'int_parsing',
  'any.only': 'enum',
  'object.base': 'dict_type',
  'array.base': 'list_type',
  'array.max': 'too_long',
  'array.min': 'too_short',
  'object.unknown': 'extra_forbidden',
  'any.unknown': 'extra_forbidden',
  'array.unique': 'value_error',
};

function issueType(detail: Joi.ValidationErrorItem, schema: Joi.Schema): string {
  if (detail.type === 'number.base') {
    return expectsInteger(schema, detail.path) ? 'int_parsing' : 'float_parsing';
  }
  return TYPE_BY_JOI_CODE[detail.type] ?? 'value_error';
}

function expectsInteger(schema: Joi.Schema, path: Array<string | number>): boolean {
  try {
    const described = schema.extract(path.map(String)).describe();
    return Boolean(described.rules?.some((rule: { name: string }) => rule.name === 'integer'));
  } catch {
    return false;
  }
}

function cleanMessage(detail: Joi.ValidationErrorItem): string {
  // Joi quotes the label ("\"name\" is required"); pydantic-style messages name no field, `loc` does.
  const message = detail.message.replace(/^"[^"]*" /, '');
  if (detail.type === 'any.required') return 'Field required';
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * How deep a JSON value may nest. PostgreSQL's jsonb parser and JSON.stringify both recurse, so a 20,000-deep body
 * would fail far from the edge (a 500); no request of either API needs more than a few levels.
 */
export const MAX_JSON_DEPTH = 64;

// A surrogate half without its partner: JSON.stringify writes it as a `\ud800` escape, which jsonb refuses.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringIssue(text: string, loc: Array<string | number>): ValidationIssue | null {
  if (text.includes('\0')) return { loc, msg: 'String must not contain a NUL character', type: 'string_nul' };
  if (LONE_SURROGATE.test(text)) return { loc, msg: 'String must be valid Unicode (a lone surrogate)', type: 'string_unicode' };
  return null;
}

/**
 * Finds what no column can store: a string or key with a NUL character (PostgreSQL rejects it in text and jsonb) or a
 * lone surrogate (jsonb rejects it), or nesting deeper than MAX_JSON_DEPTH. Returns the first issue, its `loc` starting with `part`, or null.
 */
export function unstorableIssue(value: unknown, part: RequestPart | 'header'): ValidationIssue | null {
  const visit = (node: unknown, loc: Array<string | number>, depth: number): ValidationIssue | null => {
    if (typeof node === 'string') return stringIssue(node, loc);
    if (typeof node !== 'object' || node === null) return null;
    if (depth >= MAX_JSON_DEPTH) {
      return { loc, msg: `Value nests deeper than ${MAX_JSON_DEPTH} levels`, type: 'too_deep' };
    }
    const entries: Array<[string | number, unknown]> = Array.isArray(node)
      ? node.map((item, i) => [i, item])
      : Object.entries(node);
    for (const [key, child] of entries) {
      const keyIssue = typeof key === 'string' ? stringIssue(key, [...loc, key]) : null;
      if (keyIssue) return keyIssue;
      const issue = visit(child, [...loc, key], depth + 1);
      if (issue) return issue;
    }
    return null;
  };
  return visit(value, [part], 0);
}

/** Whether a missing body is acceptable: the schema has a default or is explicitly optional. */
function allowsMissing(schema: Joi.Schema): boolean {
  const flags = (schema.describe().flags ?? {}) as { presence?: string; default?: unknown };
  return flags.default !== undefined || flags.presence === 'optional';
}

/** Validates one part of a request; returns the converted value or throws ValidationError (422). */
export function validatePart<T>(schema: Joi.Schema, value: unknown, part: RequestPart): T {
  // A declared body is required unless its schema says otherwise: handlers are never handed `undefined`.
  if (part === 'body' && value === undefined && !allowsMissing(schema)) {
    throw new ValidationError([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  }
  // Bodies were checked when read (jsonBody.ts); path and query strings are checked here.
  const unstorable = part === 'body' ? null : unstorableIssue(value, part);
  if (unstorable) throw new ValidationError([unstorable]);
  const { value: converted, error } = schema.validate(value, {
    abortEarly: false,
    convert: true,
    stripUnknown: part !== 'body' ? false : { objects: false },
    allowUnknown: part === 'query',
    errors: { wrap: { label: '"' } },
  });
  if (!error) return converted as T;
  const issues: ValidationIssue[] = error.details.map((detail) => ({
    loc: [part, ...detail.path],
    msg: cleanMessage(detail),
    type: issueType(detail, schema),
  }));
  throw new ValidationError(issues);
}

/** How many distinct path or query inputs each route remembers the validated value of. */
const VALIDATED_INPUTS_PER_ROUTE = 1000;

/**
 * `validatePart` for a route's path or query, remembering the validated value of recent inputs: a poller repeats the
 * same ids and query string, and Joi cost more per request than the database lookup. Sound because such a part is a
 * small map of strings and its schema a pure function of it (constant defaults, no external rule). Refusals are not
 * remembered; each caller gets its own copy.
 */
export function rememberingValidator<T extends object>(schema: Joi.Schema, part: 'path' | 'query'): (value: object) => T {
  const validated = new BoundedMap<string, T>(VALIDATED_INPUTS_PER_ROUTE);
  return (value) => {
    const key = JSON.stringify(value);
    const known = validated.get(key);
    if (known) return { ...known };
    const converted = validatePart<T>(schema, value, part);
    validated.set(key, converted);
    return { ...converted };
  };
}
