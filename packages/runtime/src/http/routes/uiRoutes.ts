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
import { publicBase } from '../forwarded';

const uiBody = Joi.object({ name: Joi.string().required() }).unknown(true);

export function registerUiRoutes(router: Router, bundles: ReadonlyMap<string, UiFile[]>): void {
  router.post('/ui/:agent', (ctx) => {
    const agent = ctx.params.agent!;
    const { name } = validatePart<{ name: string }>(uiBody, ctx.state.body, 'body');
    const files = bundles.get(agent);
    if (!files?.length) throw new NotFoundError(`UI not found for agent "${agent}".`);
    // Where the client is (behind the gateway: its public host and the deployment's path prefix).
    const origin = `${publicBase(ctx)}/ui/${encodeURIComponent(agent)}`;
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
