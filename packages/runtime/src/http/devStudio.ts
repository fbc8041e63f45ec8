/**
 * The studio under `graphx dev` (`/studio/`): the console's built single page in studio mode, on the app's own
 * origin. There is no control plane to check an API key, so `graphx dev` makes a studio token (kept in the
 * environment, so the workers it forks share it) and prints the studio's address with it in the fragment
 * (`/studio/#token=…`: a fragment never reaches a server or a log). A request marked `x-auth-scheme: graphx-studio`
 * with that token as its `X-Api-Key` is a debugging-UI user for the app's custom auth.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { consolePagesMiddleware } from '@graphx/kit/http/consolePages';
import type Koa from 'koa';

const TOKEN_VARIABLE = 'GRAPHX_DEV_STUDIO_TOKEN';
export const STUDIO_MOUNT = '/studio';

/** The dev server's studio token; made on first use unless the developer set one. */
export function devStudioToken(): string {
  process.env[TOKEN_VARIABLE] ||= crypto.randomBytes(24).toString('base64url');
  return process.env[TOKEN_VARIABLE];
}

/** True when `given` is the dev studio token (compared in constant time). */
export function isDevStudioToken(given: string): boolean {
  const token = Buffer.from(devStudioToken());
  const candidate = Buffer.from(given);
  return candidate.length === token.length && crypto.timingSafeEqual(candidate, token);
}

/** The address the developer opens. */
export function devStudioUrl(runtimeUrl: string): string {
  return `${runtimeUrl}${STUDIO_MOUNT}/#token=${devStudioToken()}`;
}

/**
 * The console's build in this checkout: `packages/console/dist`, the runtime package's sibling. Found by walking up
 * from this module, which runs from `src/http/` or, bundled, from the package's `dist/`.
 */
function consoleDistDir(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'console', 'package.json'))) return path.join(dir, 'console', 'dist');
  }
  return path.join(__dirname, 'console-not-found');
}

/** Serves the studio page and its assets (GET only; no credentials needed for the page itself). */
export function devStudioPagesMiddleware(): Koa.Middleware {
  return consolePagesMiddleware({ mountPath: STUDIO_MOUNT, mode: 'studio', distDir: consoleDistDir() });
}
