/** What the serving page says about where the console runs (meta tags the server writes into index.html). */
function meta(name: string): string | null {
  return document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') || null;
}

/** `console`: under the control plane (/console/); `studio`: the studio alone, served by `graphx dev` (/studio/). */
export const MODE: 'console' | 'studio' = meta('graphx:mode') === 'studio' ? 'studio' : 'console';

/** The Temporal Web UI of the control plane's namespace, when the server knows one. */
export const TEMPORAL_UI_URL = meta('graphx:temporal-ui');
