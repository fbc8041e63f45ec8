/**
 * Generative UI as the anchor serves it (langgraph-api `ui/load.mts`): `POST /ui/{agent}` `{name}` answers the HTML
 * that loads the agent's bundle (its CSS links and a script whose onload renders component `name` into the
 * `{{shadowRootId}}` the SDK's `LoadExternalComponent` substitutes), `GET /ui/{agent}/{file}` serves the bundle's
 * files, without authentication (a script tag sends no credentials), as the anchor does.
 */
import path from 'node:path';
import type Router from '@koa/router';
import Joi from 'joi';
import { NotFoundError } from '@graphx/kit/errors';
import { validatePart } from '@graphx/kit/http/validation';
import type { UiFile } from '../../uiBundles';

/** A path prefix from X-Forwarded-Prefix (`/name`, no trailing slash), or '' when absent or not a plain path. */
function forwardedPrefix(header: string): string {
  const prefix = header.trim().replace(/\/+$/, '');
  return /^(\/[A-Za-z0-9._~-]+)+$/.test(prefix) ? prefix : '';
}

const uiBody = Joi.object({ name: Joi.string().required() }).unknown(true);

export function registerUiRoutes(router: Router, bundles: ReadonlyMap<string, UiFile[]>): void {
  router.post('/ui/:agent', (ctx) => {
    const agent = ctx.params.agent!;
    const { name } = validatePart<{ name: string }>(uiBody, ctx.state.body, 'body');
    const files = bundles.get(agent);
    if (!files?.length) throw new NotFoundError(`UI not found for agent "${agent}".`);
    const host = ctx.get('host');
    const isHost = (needle: string) => host === needle || host.startsWith(`${needle}:`);
    // Behind the gateway the app lives under the deployment's path, which the gateway strips and names in
    // X-Forwarded-Prefix: the bundle's URLs keep it, or the browser would ask the gateway's root for them.
    const prefix = forwardedPrefix(ctx.get('x-forwarded-prefix'));
    // Protocol-relative behind a proxy (the page's own scheme); plain http on a local dev server, as the anchor.
    const origin = `${isHost('localhost') || isHost('127.0.0.1') ? 'http:' : ''}//${host}${prefix}/ui/${encodeURIComponent(agent)}`;
    const html = files
      .filter((file) => path.extname(file.basename) === '.css')
      .map((css) => `<link rel="stylesheet" href="${origin}/${css.basename}" />`);
    const stableName = agent.replace(/[^a-zA-Z0-9]/g, '_');
    const js = files.find((file) => path.extname(file.basename) === '.js');
    if (js) {
      // JSON.stringify inside a single-quoted attribute: a quote in the name cannot end the attribute.
      const messageName = JSON.stringify(name).replace(/'/g, '&#39;');
      html.push(
        `<script src="${origin}/${js.basename}" onload='__LGUI_${stableName}.render(${messageName}, "{{shadowRootId}}")'></script>`,
      );
    }
    ctx.type = 'text/html';
    ctx.body = html.join('\n');
  });

  router.get('/ui/:agent/:basename', (ctx) => {
    const file = bundles.get(ctx.params.agent!)?.find((item) => item.basename === ctx.params.basename);
    if (!file) throw new NotFoundError(`File ${ctx.params.basename} not found.`);
    ctx.type = path.extname(file.basename);
    ctx.body = file.contents;
  });
}
