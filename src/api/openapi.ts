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
export function buildOpenApi(registry: RouteRegistry): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of registry.routes) {
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
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: toJsonSchema(route.body) } } };
      (operation.responses as Record<string, unknown>)['422'] = {
        description: 'Validation Error',
        content: { 'application/json': { schema: VALIDATION_ERROR } },
      };
    }
    if ((route.auth ?? 'apiKey') === 'apiKey') operation.security = [{ ApiKeyAuth: [] }];
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'graphx platform', version: '0.1.0', description: 'Control plane and auth service (v2).' },
    paths,
    components: { securitySchemes: { ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
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
