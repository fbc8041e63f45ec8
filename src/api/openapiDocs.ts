/**
 * `/docs`: Swagger UI rendering `/openapi.json`, served from the installed `swagger-ui-dist` package (no CDN: the
 * page works offline and behind a firewall, and loads nothing we did not ship). Only the files the page names are
 * served, from a fixed table, so no request path ever reaches the file system.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';

const DIST_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSET_PREFIX = '/docs/assets';
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// A file of its own (not an inline script), so the page's policy can forbid inline scripts altogether.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 1,
    displayRequestDuration: true,
    persistAuthorization: false,
  });
};
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>graphx platform API</title>
<link rel="stylesheet" href="${ASSET_PREFIX}/swagger-ui.css">
<link rel="icon" type="image/png" href="${ASSET_PREFIX}/favicon-32x32.png">
</head>
<body>
<noscript>The API description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${ASSET_PREFIX}/swagger-ui-bundle.js"></script>
<script src="${ASSET_PREFIX}/swagger-initializer.js"></script>
</body>
</html>
`;

// Swagger UI sets style attributes (inline styles) and shows data: images; scripts only from this origin.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'";

/** Declares GET /docs and its assets on `router` (public: the description it renders is public too). */
export function registerDocsRoutes(router: Router): void {
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get(`${ASSET_PREFIX}/swagger-initializer.js`, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = INITIALIZER;
  });
  router.get(`${ASSET_PREFIX}/:file`, (ctx, next) => {
    const type = Object.hasOwn(ASSETS, ctx.params.file) ? ASSETS[ctx.params.file] : undefined;
    if (!type) return next();
    ctx.type = type;
    // The package version is in the lock file; a restart after an upgrade serves the new files.
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = fs.createReadStream(path.join(DIST_DIR, ctx.params.file));
  });
}
