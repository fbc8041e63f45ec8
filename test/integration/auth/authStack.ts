/**
 * What the auth tests share: our API on a real loopback port (the authorization server must redirect the browser to
 * it), a real oidc-provider with one client per token endpoint auth method, and helpers to drive a whole flow.
 */
import http from 'node:http';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import { createApp } from '../../../src/api/app';
import type { GraphxConfig } from '../../../src/config';
import type { Db } from '../../../src/db/knex';
import type { SecretBox } from '../../../src/security/secretBox';
import { startOAuthServer, type TestOAuthServer, type TokenEndpointAuthMethod } from '../../support/oauthServer';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';
import { TestBrowser } from './browser';

/** Provider ids registered at the authorization server (it matches redirect URIs exactly). */
export const PROVIDER_IDS = ['idp-basic', 'idp-post', 'idp-none', 'codehost', 'codehost-b'] as const;

export interface ApiAnswer {
  status: number;
  body: any;
  text: string;
}

export interface AuthStack {
  baseUrl: string;
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  oauth: TestOAuthServer;
  api(path: string, options?: { method?: string; apiKey?: string; body?: unknown }): Promise<ApiAnswer>;
  /** Registers a provider pointing at the test authorization server, for the client of `method`. */
  createProvider(
    apiKey: string,
    providerId: string,
    method: TokenEndpointAuthMethod,
    extra?: Record<string, unknown>,
  ): Promise<ApiAnswer>;
  /** authenticate → browser (login, consent) → the redirect to our callback, not yet followed. */
  authorize(apiKey: string, providerId: string, scopes?: string[]): Promise<{ authId: string; callback: URL }>;
  tenant(label?: string): Promise<{ tenantId: string; apiKey: string }>;
  stop(): Promise<void>;
}

/** Starts the API and the authorization server; call `stop` in afterAll. */
export async function startAuthStack(
  options: { accessTokenTtlSeconds?: number; env?: Record<string, string> } = {},
): Promise<AuthStack> {
  const db = testDb();
  const temporal: Client = await testTemporalClient();
  let app: Koa | null = null;
  const server = http.createServer((request, response) => void app?.callback()(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const config = testConfig({ GRAPHX_PUBLIC_URL: baseUrl, ...options.env });
  const secretBox = testSecretBox(config);
  app = createApp({ config, db, secretBox, temporal });
  const oauth = await startOAuthServer({
    redirectUris: PROVIDER_IDS.map((id) => `${baseUrl}/v2/auth/callback/${id}`),
    accessTokenTtlSeconds: options.accessTokenTtlSeconds,
  });

  const api: AuthStack['api'] = async (path, request = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: request.method ?? 'GET',
      redirect: 'manual',
      headers: {
        ...(request.apiKey ? { 'x-api-key': request.apiKey } : {}),
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: request.body !== undefined ? JSON.stringify(request.body) : undefined,
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: response.status, body, text };
  };

  const createProvider: AuthStack['createProvider'] = (apiKey, providerId, method, extra = {}) => {
    const client = oauth.clients[method];
    return api('/v2/auth/providers', {
      method: 'POST',
      apiKey,
      body: {
        provider_id: providerId,
        name: `Test ${method}`,
        client_id: client.clientId,
        ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
        auth_url: oauth.authUrl,
        token_url: oauth.tokenUrl,
        token_endpoint_auth_method: method,
        uses_pkce: method === 'none',
        ...extra,
      },
    });
  };

  const authorize: AuthStack['authorize'] = async (apiKey, providerId, scopes = ['repo']) => {
    const started = await api('/v2/auth/authenticate', { method: 'POST', apiKey, body: { provider: providerId, scopes } });
    if (started.status !== 200) throw new Error(`authenticate answered ${started.status}: ${started.text}`);
    const callback = await new TestBrowser().authorize(started.body.url, `${baseUrl}/v2/auth/callback/`);
    return { authId: started.body.auth_id, callback };
  };

  return {
    baseUrl,
    config,
    db,
    secretBox,
    oauth,
    api,
    createProvider,
    authorize,
    tenant: (label) => createTenant(db, label),
    async stop() {
      await oauth.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await temporal.connection.close();
      await db.destroy();
    },
  };
}

/** The callback URL re-aimed at our API path (it already is) as a path plus query, for `api()`. */
export function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}
