/**
 * A real OAuth 2 authorization server for tests: `oidc-provider` in its own Node process on 127.0.0.1, with three
 * clients, one per token endpoint auth method. It runs in a child process because oidc-provider is ESM-only and jest
 * (on Node 20) cannot load ESM; the same file is the child's entry point (run through tsx with `--serve`).
 *
 * Its dev interactions accept any login and password; `test/integration/auth/browser.ts` drives them over HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface TestOAuthClient {
  clientId: string;
  /** Null for the public client (`none`). */
  clientSecret: string | null;
  method: TokenEndpointAuthMethod;
}

export interface TestOAuthServer {
  issuer: string;
  authUrl: string;
  tokenUrl: string;
  clients: Record<TokenEndpointAuthMethod, TestOAuthClient>;
  /** Asks the server (token introspection) whether an access token is active. */
  isActiveToken(token: string): Promise<boolean>;
  stop(): Promise<void>;
}

interface ServeOptions {
  redirectUris: string[];
  clients: TestOAuthClient[];
  accessTokenTtlSeconds: number;
}

/**
 * Starts the authorization server. `redirectUris` are registered for every client (oidc-provider matches exactly).
 * Secrets contain characters that need form-encoding, so `client_secret_basic` is tested with the RFC 6749 encoding.
 */
export async function startOAuthServer(options: {
  redirectUris: string[];
  accessTokenTtlSeconds?: number;
}): Promise<TestOAuthServer> {
  const secret = () => `s3cr:t+${crypto.randomBytes(12).toString('base64url')} %`;
  const clients: Record<TokenEndpointAuthMethod, TestOAuthClient> = {
    client_secret_basic: { clientId: 'graphx-basic', clientSecret: secret(), method: 'client_secret_basic' },
    client_secret_post: { clientId: 'graphx-post', clientSecret: secret(), method: 'client_secret_post' },
    none: { clientId: 'graphx-public', clientSecret: null, method: 'none' },
  };
  const serve: ServeOptions = {
    redirectUris: options.redirectUris,
    clients: Object.values(clients),
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3600,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--serve'], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, NODE_ENV: 'test', OAUTH_SERVER_OPTIONS: JSON.stringify(serve) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const issuer = await readIssuer(child);
  const introspector = clients.client_secret_post;
  return {
    issuer,
    authUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    clients,
    async isActiveToken(token) {
      const response = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token,
          client_id: introspector.clientId,
          client_secret: introspector.clientSecret as string,
        }),
      });
      return ((await response.json()) as { active?: boolean }).active === true;
    },
    stop: () => stopChild(child),
  };
}

function readIssuer(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once('exit', (code) => reject(new Error(`OAuth server exited with ${code}: ${stderr}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^issuer=(\S+)$/.exec(line);
      if (match) resolve(match[1] as string);
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The child process: builds the provider once the port (and so the issuer) is known. */
async function serveInThisProcess(): Promise<void> {
  const options = JSON.parse(process.env.OAUTH_SERVER_OPTIONS as string) as ServeOptions;
  // A real dynamic import: this branch only runs under tsx in the child, where ESM loads natively.
  // The name is a variable so the type checker does not look for typings oidc-provider does not ship.
  const moduleName = 'oidc-provider';
  const { default: Provider } = (await import(moduleName)) as { default: new (...args: any[]) => any };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const issuer = `http://127.0.0.1:${port}`;
  const resource = 'urn:graphx-test:codehost';
  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => ({
      client_id: client.clientId,
      ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
      token_endpoint_auth_method: client.method,
      redirect_uris: options.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    })),
    scopes: ['repo', 'read:user', 'offline_access'],
    findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: () => ({ sub: accountId }) }),
    // Code-host style tokens: opaque, for one resource, refreshable.
    features: {
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'repo read:user',
          accessTokenFormat: 'opaque',
          accessTokenTTL: options.accessTokenTtlSeconds,
        }),
      },
    },
    issueRefreshToken: () => true,
    rotateRefreshToken: true,
  });
  server.on('request', provider.callback());
  process.stdout.write(`issuer=${issuer}\n`);
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  // A test run that dies without calling stop() must not leave this server behind.
  const parentPid = process.ppid;
  setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch {
      process.exit(0);
    }
  }, 1000).unref();
}

if (process.argv.includes('--serve') && require.main === module) {
  serveInThisProcess().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
