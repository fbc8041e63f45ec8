/**
 * The web console's built files (packages/console/dist) served under a mount path: `/console/` by the control plane,
 * `/studio/` by `graphx dev`. Assets are served from a table of the files the build wrote (no request path ever
 * reaches the file system); every other path below the mount is the single page, with the mount written in as its
 * `<base href>` and what the page needs to know as meta tags. The page's policy allows scripts and styles from this
 * origin only (no inline script, no eval), requests to this origin only, and no framing by anyone.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';

export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

export interface ConsolePagesOptions {
  /** Where the page is served, without a trailing slash: `/console` or `/studio`. */
  mountPath: string;
  mode: 'console' | 'studio';
  /** Web UI of the control plane's Temporal namespace (linked from deployment pages), when known. */
  temporalUiUrl?: string | null;
  /** The console's build (`packages/console/dist` of the checkout). */
  distDir: string;
}

interface LoadedBuild {
  digest: string;
  page: string;
  assets: Map<string, { file: string; type: string }>;
}

/** Security headers of every answer under the mount (the page, its assets, and its errors). */
function setPageHeaders(ctx: Koa.Context): void {
  ctx.set('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Reads the build (again when its digest file changed, so a rebuild under a running `npm start` is served at once).
 * Null when there is no build.
 */
function buildLoader(options: ConsolePagesOptions): () => LoadedBuild | null {
  const { distDir } = options;
  let loaded: LoadedBuild | null = null;
  return () => {
    let digest: string;
    try {
      digest = fs.readFileSync(path.join(distDir, '.build-digest'), 'utf8').trim();
    } catch {
      digest = 'unstamped';
    }
    if (loaded && loaded.digest === digest) return loaded;
    let html: string;
    try {
      html = fs.readFileSync(path.join(distDir, 'index.html'), 'utf8');
    } catch {
      return null;
    }
    const head = [
      `<base href="${escapeAttribute(options.mountPath)}/">`,
      `<meta name="graphx:mode" content="${options.mode}">`,
      options.temporalUiUrl ? `<meta name="graphx:temporal-ui" content="${escapeAttribute(options.temporalUiUrl)}">` : '',
    ].join('');
    // The base must come before any relative URL in the document: first thing in <head>.
    const page = html.replace(/<head>/i, `<head>${head}`);
    const assets = new Map<string, { file: string; type: string }>();
    const assetDir = path.join(distDir, 'assets');
    for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) {
      const type = TYPES[path.extname(name)];
      if (type) assets.set(`assets/${name}`, { file: path.join(assetDir, name), type });
    }
    loaded = { digest, page, assets };
    return loaded;
  };
}

/** Koa middleware answering GET/HEAD under `mountPath`; everything else goes on to `next`. */
export function consolePagesMiddleware(options: ConsolePagesOptions): Koa.Middleware {
  const load = buildLoader(options);
  const mount = options.mountPath;
  return async (ctx, next) => {
    if (ctx.path !== mount && !ctx.path.startsWith(`${mount}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    setPageHeaders(ctx);
    if (ctx.path === mount) {
      ctx.redirect(`${mount}/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      return;
    }
    const build = load();
    if (!build) {
      ctx.status = 503;
      ctx.body = { detail: 'The web console is not built: run `npm run build:console` (npm ci builds it).' };
      return;
    }
    const below = ctx.path.slice(mount.length + 1);
    const asset = build.assets.get(below);
    if (asset) {
      ctx.type = asset.type;
      // Names carry their content's hash: a new build has new names.
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.body = fs.createReadStream(asset.file);
      return;
    }
    if (below.startsWith('assets/')) {
      ctx.status = 404;
      ctx.body = { detail: 'Not found.' };
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = build.page;
  };
}
