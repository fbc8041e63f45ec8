/**
 * The agent-server client of the studio (`@langchain/langgraph-sdk`, unchanged). In the console it talks to a
 * deployment through the control plane's `/v2/deployments/{id}/app` route, with the tab's API key; under `graphx dev`
 * it talks to the page's own origin. Every request is marked `x-auth-scheme: graphx-studio`, so the app's custom
 * auth sees a debugging-UI user (`isStudioUser`).
 */
import { Client } from '@langchain/langgraph-sdk';
import { apiKey } from '../session';

export const STUDIO_AUTH_SCHEME = 'graphx-studio';
const DEV_TOKEN_KEY = 'graphx.studioToken';

/** `graphx dev` prints the studio's address with `#token=…`: kept for the tab, then removed from the address bar. */
function devStudioToken(): string | null {
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const fromAddress = fragment.get('token');
  if (fromAddress) {
    window.sessionStorage.setItem(DEV_TOKEN_KEY, fromAddress);
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  return window.sessionStorage.getItem(DEV_TOKEN_KEY);
}

/** Where the app's API is: the control plane's door to deployment `deploymentId`, or this origin under `graphx dev`. */
export function studioApiUrl(deploymentId: string | null): string {
  return deploymentId
    ? `${window.location.origin}/v2/deployments/${encodeURIComponent(deploymentId)}/app`
    : window.location.origin;
}

export function createStudioClient(deploymentId: string | null): {
  client: Client;
  apiUrl: string;
  headers: Record<string, string>;
} {
  const key = deploymentId ? apiKey() : devStudioToken();
  const headers: Record<string, string> = { 'x-auth-scheme': STUDIO_AUTH_SCHEME };
  if (key) headers['x-api-key'] = key;
  const apiUrl = studioApiUrl(deploymentId);
  // apiKey null: the SDK must not look for keys elsewhere; ours travels in the headers above.
  const client = new Client({ apiUrl, apiKey: null, defaultHeaders: headers, callerOptions: { maxRetries: 1 } });
  return { client, apiUrl, headers };
}
