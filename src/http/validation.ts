/**
 * Joi at the edge, answered in pydantic's shape: `{"detail":[{"loc":["body","name"],"msg":"...","type":"missing"}]}`.
 * The `type` names follow pydantic so clients written against the real control plane read our errors unchanged.
 */
import type Joi from 'joi';
import { ValidationError, type ValidationIssue } from '../errors';

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

/** Validates one part of a request; returns the converted value or throws ValidationError (422). */
export function validatePart<T>(schema: Joi.Schema, value: unknown, part: RequestPart): T {
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
