/**
 * The app calling its own server, as the anchor lets it: a `Client()` of `@langchain/langgraph-sdk` created without
 * an `apiUrl` inside app code (a custom route, a node) talks to this server (the SDK reads the address and fetch from
 * the `langgraph_api:url` / `langgraph_api:fetch` globals), and a run's `webhook` given as a path (`/my/hook`) is
 * posted to the app's own route. Such requests carry a loopback token so that control-plane key auth, which the
 * app's own process cannot pass, admits them as the app; custom auth still judges them like any other request.
 * The token is made once per runtime (its workers share it through the environment) and is never copied into runs.
 */
import crypto from 'node:crypto';

export const LOOPBACK_HEADER = 'x-graphx-loopback';
const TOKEN_VARIABLE = 'GRAPHX_RUNTIME_LOOPBACK_TOKEN';

/** This runtime's loopback token; made (and left in the environment for workers forked later) on first use. */
export function loopbackToken(): string {
  process.env[TOKEN_VARIABLE] ??= crypto.randomBytes(24).toString('hex');
  return process.env[TOKEN_VARIABLE];
}

/** True when a request came from this runtime itself. */
export function isLoopbackRequest(headerValue: string): boolean {
  const token = Buffer.from(loopbackToken());
  const given = Buffer.from(headerValue);
  return given.length === token.length && crypto.timingSafeEqual(given, token);
}

let baseUrl: string | null = null;

/** The server's own address for loopback requests (a wildcard bind is reached on 127.0.0.1). */
export function bindLoopback(host: string, port: number): void {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  baseUrl = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
  const global = globalThis as Record<symbol, unknown>;
  global[Symbol.for('langgraph_api:url')] = baseUrl;
  global[Symbol.for('langgraph_api:fetch')] = loopbackFetch;
}

/** The server's own address for loopback requests, once it listens. */
export function loopbackBaseUrl(): string | null {
  return baseUrl;
}

/** `fetch` that adds the loopback token to requests for this server (and only to those). */
export function loopbackFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  if (!baseUrl) throw new Error('The runtime is not serving yet');
  const url = new URL(input instanceof Request ? input.url : String(input), baseUrl);
  if (url.origin !== new URL(baseUrl).origin) return fetch(input, init);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set(LOOPBACK_HEADER, loopbackToken());
  return fetch(input instanceof Request ? new Request(input, { ...init, headers }) : url, { ...init, headers });
}
