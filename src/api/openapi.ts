/** OpenAPI 3.1 generated from the route declarations (the same Joi schemas the routes validate with). */
import joiToJson from 'joi-to-json';
import type { RouteRegistry, RouteSpec } from './routeKit';

const toJsonSchema = (schema: unknown) =>
  withoutMixedRanges(joiToJson(schema as never, 'open-api-3.1')) as Record<string, unknown>;

/**
 * joi-to-json renders `greater(0)` as both `minimum: 0` and `exclusiveMinimum: 0`; the exclusive bound alone says it
 * (Redocly's no-mixed-number-range-constraints).
 */
function withoutMixedRanges(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutMixedRanges);
  if (!node || typeof node !== 'object') return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = withoutMixedRanges(value);
  for (const [inclusive, exclusive] of [
    ['minimum', 'exclusiveMinimum'],
    ['maximum', 'exclusiveMaximum'],
  ] as const) {
    if (typeof copy[inclusive] === 'number' && typeof copy[exclusive] === 'number' && copy[inclusive] === copy[exclusive]) {
      delete copy[inclusive];
    }
  }
  return copy;
}

/** A media type object: the schema, and the schema's first Joi example lifted to `example` (what viewers show). */
function mediaOf(schema: unknown): Record<string, unknown> {
  const example = (schema as { describe(): { examples?: unknown[] } }).describe().examples?.[0];
  return { schema: toJsonSchema(schema), ...(example === undefined ? {} : { example }) };
}

const VALIDATION_ERROR = {
  type: 'object',
  required: ['detail'],
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: {
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          type: { type: 'string' },
        },
      },
    },
  },
  example: { detail: [{ loc: ['path', 'deployment_id'], msg: 'Must be a valid GUID', type: 'uuid_parsing' }] },
};

const ERROR_DETAIL = {
  type: 'object',
  required: ['detail'],
  properties: { detail: { type: 'string', description: 'What went wrong, in a sentence' } },
};

const errorResponse = (description: string, example?: unknown, schema = '#/components/schemas/ErrorDetail') => ({
  description,
  content: { 'application/json': { schema: { $ref: schema }, ...(example === undefined ? {} : { example }) } },
});

/** A route's own `{ detail }` answer (404, 409…) is the shared ErrorDetail schema, not a copy of it. */
function isDetailOnly(schema: unknown): boolean {
  const keys = (schema as { describe(): { keys?: Record<string, unknown> } }).describe().keys;
  return keys !== undefined && Object.keys(keys).join() === 'detail';
}

/** The resources, in the order the viewer lists them. */
const TAGS = [
  { name: 'deployments', description: 'Agent servers built from a repository or an image, and their lifecycle' },
  { name: 'revisions', description: 'Each build and rollout of a deployment, its status and logs' },
  { name: 'auth', description: 'OAuth providers and the token flows deployed apps start' },
  { name: 'integrations', description: 'Code-hosting app installations' },
  { name: 'tracing', description: 'Tracing projects and the runs deployed apps record' },
];

/** Answers any operation can give, described once and referenced; examples are the messages the server sends. */
const COMMON_RESPONSES = {
  Unauthorized: errorResponse('Missing or invalid credentials', { detail: 'Invalid API key.' }),
  PayloadTooLarge: errorResponse('Request body over 1 MiB', { detail: 'Request body is larger than 1048576 bytes.' }),
  ValidationError: errorResponse('Validation error: path, query or body', undefined, '#/components/schemas/HTTPValidationError'),
  InternalError: errorResponse('Unexpected server error (logged with the request id)', { detail: 'Internal server error' }),
};

function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\{\*([A-Za-z0-9_]+)\}/g, '{$1}');
}

function parametersOf(route: RouteSpec) {
  const parameters: unknown[] = [];
  for (const [location, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = toJsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      parameters.push({
        name,
        in: location,
        required: location === 'path' || Boolean(json.required?.includes(name)),
        schema: property,
      });
    }
  }
  return parameters;
}

/** Builds the OpenAPI document for every declared route. */
export function buildOpenApi(registry: RouteRegistry, options: { includeInternal?: boolean } = {}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of registry.routes) {
    if (route.auth === 'service' && !options.includeInternal) continue;
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: route.tags,
      operationId: `${route.method}_${route.path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      parameters: parametersOf(route),
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, response]) => [
          status,
          response.schema && Number(status) >= 400 && isDetailOnly(response.schema)
            ? errorResponse(response.description)
            : {
                description: response.description,
                ...(response.schema
                  ? { content: { [response.contentType ?? 'application/json']: mediaOf(response.schema) } }
                  : {}),
              },
        ]),
      ),
    };
    const responses = operation.responses as Record<string, unknown>;
    if (route.body) {
      const optional = (route.body.describe().flags as { presence?: string } | undefined)?.presence === 'optional';
      operation.requestBody = { required: !optional, content: { 'application/json': mediaOf(route.body) } };
      responses['413'] ??= { $ref: '#/components/responses/PayloadTooLarge' };
    }
    if (route.body || route.params || route.query) responses['422'] ??= { $ref: '#/components/responses/ValidationError' };
    if ((route.auth ?? 'apiKey') === 'apiKey') operation.security = [{ ApiKeyAuth: [] }];
    if (route.auth === 'service') operation.security = [{ ServiceToken: [] }];
    // Public on purpose (browser redirects carry no key): said explicitly, so it does not read as forgotten.
    if (route.auth === 'none') operation.security = [];
    if (route.auth !== 'none') responses['401'] ??= { $ref: '#/components/responses/Unauthorized' };
    responses['500'] ??= { $ref: '#/components/responses/InternalError' };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'graphx platform',
      version: '0.1.0',
      description:
        'Control plane and auth service (v2). Authenticate with an API key in the `X-Api-Key` header. Errors answer ' +
        'JSON with a `detail`: a sentence, or for 422 the list of invalid fields.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: "try it out" and generated clients talk to whichever address served this document.
    servers: [{ url: '/', description: 'This control plane' }],
    tags: options.includeInternal ? [...TAGS, { name: 'internal', description: 'Between graphx services only' }] : TAGS,
    paths,
    components: {
      schemas: { ErrorDetail: ERROR_DETAIL, HTTPValidationError: VALIDATION_ERROR },
      responses: COMMON_RESPONSES,
      securitySchemes: {
        ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        ...(options.includeInternal ? { ServiceToken: { type: 'http', scheme: 'bearer' } } : {}),
      },
    },
  };
}
