/**
 * The agent server's own API description: `GET /openapi.json` (OpenAPI 3.1, built from the routes this server
 * registers, so it names every operation it answers, with its path parameters, and which take a JSON body) and
 * `GET /docs` (Swagger UI from the installed `swagger-ui-dist`, served from a fixed table of files, no CDN, no inline
 * script). Both public, as `/info` is. Request and response bodies are described as JSON objects, not field by field.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';

const DIST_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};
const INITIALIZER = `window.onload = function () {
  var base = location.pathname.replace(/\\/docs\\/?$/, '');
  window.ui = SwaggerUIBundle({ url: base + '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });
};
`;
const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Agent server API</title><link rel="stylesheet" href="docs/assets/swagger-ui.css"></head>
<body>
<noscript>The API description is at <a href="openapi.json">openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/swagger-initializer.js"></script>
</body>
</html>
`;
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'";
const PUBLIC = new Set(['/ok', '/info', '/metrics', '/docs', '/openapi.json']);
const TAGS: Array<[RegExp, string]> = [
  [/^\/assistants/, 'Assistants'],
  [/^\/threads\/\{threadId\}\/(stream\/events|commands)/, 'Streaming (protocol v2)'],
  [/^\/threads\/\{threadId\}\/runs/, 'Thread runs'],
  [/^\/threads/, 'Threads'],
  [/^\/runs\/crons/, 'Crons'],
  [/^\/runs/, 'Stateless runs'],
  [/^\/store/, 'Store'],
  [/^\/a2a/, 'A2A'],
  [/^\/mcp/, 'MCP'],
  [/^\/ui/, 'Generative UI'],
];

export function openApiDocument(router: Router): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const layer of router.stack) {
    const route = String(layer.path).replace(/:(\w+)/g, '{$1}');
    for (const method of layer.methods.filter((item) => item !== 'HEAD')) {
      const lower = method.toLowerCase();
      const tag = TAGS.find(([pattern]) => pattern.test(route))?.[1] ?? 'System';
      (paths[route] ??= {})[lower] = {
        operationId: `${lower}${route.replace(/[^A-Za-z0-9]+(\w)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase())}`,
        summary: `${method} ${route}`,
        tags: [tag],
        ...(PUBLIC.has(route) || route.startsWith('/ui/{agent}/') ? { security: [] } : {}),
        parameters: layer.paramNames.map((param) => ({
          name: String(param.name),
          in: 'path',
          required: true,
          schema: { type: 'string' },
        })),
        ...(['post', 'put', 'patch'].includes(lower)
          ? { requestBody: { content: { 'application/json': { schema: { type: 'object' } } } } }
          : {}),
        responses: {
          '200': { description: 'Success', content: { 'application/json': { schema: {} } } },
          default: {
            description: 'An error',
            content: { 'application/json': { schema: { type: 'object', properties: { detail: {} }, required: ['detail'] } } },
          },
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent server (graphx)',
      version: '0.1.0',
      description: 'The LangGraph Agent Server API this deployment serves.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The API's description with a custom app's own (a FastAPI `http.app`'s `openapi()`) merged in, as the Python server
 * lists the app's routes beside its own: the app's operations win for a path and method both have (its router answers
 * first), the paths the server never lets an app shadow stay the server's, and the app's components (schemas, …) are
 * added under their names, the server's security scheme kept.
 */
export function withAppDocument(api: Record<string, unknown>, app: Record<string, unknown> | null): Record<string, unknown> {
  if (!app || !isRecord(app.paths)) return api;
  const paths = { ...(api.paths as Record<string, Record<string, unknown>>) };
  for (const [route, operations] of Object.entries(app.paths)) {
    if (PUBLIC.has(route) || !isRecord(operations)) continue;
    paths[route] = { ...(paths[route] ?? {}), ...operations };
  }
  const components: Record<string, unknown> = { ...(api.components as Record<string, unknown>) };
  if (isRecord(app.components)) {
    for (const [section, entries] of Object.entries(app.components)) {
      if (!isRecord(entries)) continue;
      const ours = isRecord(components[section]) ? components[section] : {};
      components[section] = { ...entries, ...ours };
    }
  }
  return { ...api, components, paths };
}

/**
 * Declares GET /openapi.json, /docs and its assets; call it last, so the description names every other route.
 * `appDocument`: the custom app's own description, merged in (withAppDocument).
 */
export function registerDocsRoutes(router: Router, appDocument: Record<string, unknown> | null = null): void {
  let document: string | null = null;
  router.get('/openapi.json', (ctx) => {
    document ??= JSON.stringify(withAppDocument(openApiDocument(router), appDocument));
    ctx.type = 'application/json';
    ctx.body = document;
  });
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.type = 'text/html; charset=utf-8';
    // Relative asset URLs: behind the gateway the page lives under the deployment's path.
    ctx.body = PAGE.replaceAll('docs/assets/', `${ctx.get('x-forwarded-prefix') || ''}/docs/assets/`).replaceAll(
      'href="openapi.json"',
      `href="${ctx.get('x-forwarded-prefix') || ''}/openapi.json"`,
    );
  });
  router.get('/docs/assets/:file', (ctx) => {
    const file = ctx.params.file!;
    if (file === 'swagger-initializer.js') {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = INITIALIZER;
      return;
    }
    const type = ASSETS[file];
    if (!type) return;
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = fs.createReadStream(path.join(DIST_DIR, file));
  });
}
