/**
 * Generative UI (graphx.json `ui`: agent name → component file), bundled as the anchor's `@langchain/langgraph-ui`
 * does: one browser bundle per agent (`entrypoint.js`, and `entrypoint.css` when the components import CSS), an IIFE
 * named `__LGUI_<agent>` whose `render(name, shadowRootId)` mounts the component through the page's
 * `LGUI_EXT_STORE`; react, react-dom, the SDK and `ui_config.shared` stay external, resolved by the page through
 * `globalThis[Symbol.for("LGUI_REQUIRE")]`. Bundled once at start in a short-lived `node` process (esbuild never
 * enters the serving process) and held in memory, as the anchor holds them. Tailwind (the anchor's
 * esbuild-plugin-tailwindcss) is applied when the application or this installation provides that plugin.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '@graphx/kit/errors';

const execFileAsync = promisify(execFile);

export interface UiFile {
  basename: string;
  contents: Buffer;
}

/** The anchor's render template (langgraph-ui `render.template.mts`), in plain JS. */
const RENDER_TEMPLATE = `
const STORE_SYMBOL = Symbol.for("LGUI_EXT_STORE");
function createRenderer(components) {
  return (name, shadowRootId) => {
    const root = document.getElementById(shadowRootId).shadowRoot;
    const renderEl = document.createElement("div");
    root.appendChild(renderEl);
    window[STORE_SYMBOL].respond(shadowRootId, components[name], renderEl);
  };
}`;

const BUNDLER = `
const [esbuildPath, argsJson] = [process.argv[1], process.argv[2]];
const { agent, appDir, file, shared, template } = JSON.parse(argsJson);
const path = require('node:path');
let relative = path.relative(appDir, file).split(path.sep).join('/');
if (!relative.startsWith('./')) relative = './' + relative;
const entrypoint = {
  name: 'entrypoint',
  setup(build) {
    build.onResolve({ filter: /^entrypoint$/ }, () => ({ path: path.join(path.dirname(file), 'ui.entrypoint.tsx'), namespace: 'entrypoint-ns' }));
    build.onLoad({ filter: /.*/, namespace: 'entrypoint-ns' }, () => ({
      resolveDir: appDir,
      contents: ['import ui from ' + JSON.stringify(relative), template, 'export const render = createRenderer(ui)'].join('\\n'),
      loader: 'tsx',
    }));
  },
};
const plugins = [entrypoint];
for (const base of [appDir, __dirname]) {
  try {
    const tailwind = require(require.resolve('esbuild-plugin-tailwindcss', { paths: [base] }));
    plugins.unshift((tailwind.default || tailwind)());
    break;
  } catch {}
}
require(esbuildPath).build({
  write: false, outdir: path.join(appDir, 'dist'), entryPoints: ['entrypoint'], bundle: true, platform: 'browser',
  target: 'es2020', jsx: 'automatic', logLevel: 'silent', plugins,
  external: ['react', 'react-dom', '@langchain/langgraph-sdk', '@langchain/langgraph-sdk/react-ui', ...shared],
  globalName: '__LGUI_' + agent.replace(/[^a-zA-Z0-9]/g, '_'),
}).then(
  (result) => process.stdout.write(JSON.stringify(result.outputFiles.map((item) => {
    let text = item.text;
    if (path.basename(item.path) === 'entrypoint.js') {
      text = text.replaceAll('typeof require !== "undefined" ? require', 'typeof globalThis[Symbol.for("LGUI_REQUIRE")] !== "undefined" ? globalThis[Symbol.for("LGUI_REQUIRE")]');
    }
    return { basename: path.basename(item.path), base64: Buffer.from(text).toString('base64') };
  }))),
  (error) => { process.stderr.write(error.message); process.exit(1); },
);
`;

/**
 * Bundles each agent's components.
 * @throws ConfigError naming the agent when a component file is outside the application or does not compile.
 */
export async function bundleUi(appDir: string, ui: Record<string, string>, shared: string[]): Promise<Map<string, UiFile[]>> {
  const bundles = new Map<string, UiFile[]>();
  for (const [agent, userPath] of Object.entries(ui)) {
    const file = path.resolve(appDir, userPath);
    if (path.relative(appDir, file).startsWith('..')) {
      throw new ConfigError(`ui.${agent}: the component file must be inside the application, not ${userPath}.`);
    }
    const args = JSON.stringify({ agent, appDir, file, shared, template: RENDER_TEMPLATE });
    const { stdout } = await execFileAsync(process.execPath, ['-e', BUNDLER, require.resolve('esbuild'), args], {
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8',
      cwd: appDir,
    }).catch((error: { stderr?: string; message: string }) => {
      throw new ConfigError(`ui.${agent}: ${error.stderr?.trim() || error.message}`);
    });
    const files = JSON.parse(stdout) as Array<{ basename: string; base64: string }>;
    bundles.set(
      agent,
      files.map((item) => ({ basename: item.basename, contents: Buffer.from(item.base64, 'base64') })),
    );
  }
  return bundles;
}
