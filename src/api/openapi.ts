/** OpenAPI 3.1 generated from the route declarations (the same Joi schemas the routes validate with). */
import joiToJson from 'joi-to-json';
import type { RouteRegistry, RouteSpec } from './routeKit';

const toJsonSchema = (schema: unknown) => joiToJson(schema as never, 'open-api-3.1') as Record<string, unknown>;

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
  properties: { detail: { type: 'string' } },
  example: { detail: 'Deployment ID 5f0c7f0e-8d1e-4c6b-9a43-0c1d2e3f4a5b not found.' },
};

const errorResponse = (description: string, schema = '#/components/schemas/ErrorDetail') => ({
  description,
  content: { 'application/json': { schema: { $ref: schema } } },
});

/** Answers any operation can give, described once and referenced. */
const COMMON_RESPONSES = {
  Unauthorized: errorResponse('Missing or invalid credentials'),
  PayloadTooLarge: errorResponse('Request body over 1 MiB'),
  ValidationError: errorResponse('Validation error: path, query or body', '#/components/schemas/HTTPValidationError'),
  InternalError: errorResponse('Unexpected server error (logged with the request id)'),
};

function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
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
          {
            description: response.description,
            ...(response.schema
              ? { content: { [response.contentType ?? 'application/json']: { schema: toJsonSchema(response.schema) } } }
              : {}),
          },
        ]),
      ),
    };
    const responses = operation.responses as Record<string, unknown>;
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: toJsonSchema(route.body) } } };
      responses['413'] ??= { $ref: '#/components/responses/PayloadTooLarge' };
    }
    if (route.body || route.params || route.query) responses['422'] ??= { $ref: '#/components/responses/ValidationError' };
    if ((route.auth ?? 'apiKey') === 'apiKey') operation.security = [{ ApiKeyAuth: [] }];
    if (route.auth === 'service') operation.security = [{ ServiceToken: [] }];
    if (route.auth !== 'none') responses['401'] ??= { $ref: '#/components/responses/Unauthorized' };
    responses['500'] ??= { $ref: '#/components/responses/InternalError' };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'graphx platform', version: '0.1.0', description: 'Control plane and auth service (v2).' },
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

/** A small page that renders /openapi.json with the bundled-free Redoc-less fallback: a readable list of routes. */
export function docsPage(document: Record<string, unknown>): string {
  const paths = document.paths as Record<string, Record<string, { summary: string }>>;
  const rows = Object.entries(paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(
        ([method, op]) =>
          `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(op.summary)}</td></tr>`,
      ),
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>graphx platform API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}td{padding:.2rem .8rem;border-bottom:1px solid #ddd}</style></head>
<body><h1>graphx platform API 0.1.0</h1><p>Machine-readable description: <a href="/openapi.json">/openapi.json</a></p>
<table><thead><tr><th>Method</th><th>Path</th><th>Summary</th></tr></thead><tbody>${rows}</tbody></table></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}
