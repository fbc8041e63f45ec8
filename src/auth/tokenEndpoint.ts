/**
 * The client side of an OAuth 2 token endpoint (RFC 6749 §4.1.3 code exchange, §6 refresh) with the three client
 * authentication methods of RFC 7591. Written here rather than taken from `oauth4webapi`/`openid-client`: both are
 * ESM-only, which our CommonJS build under jest cannot load, and both want an issuer (RFC 9207 `iss` checks) that a
 * provider defined by two bare URLs does not have. What is here is small: a form POST and a careful reading of the
 * answer. Error messages carry the provider's `error` code and description, never the response body (it may hold
 * tokens).
 */
import net from 'node:net';
import { InputError } from '@graphx/kit/errors';
import type { TokenEndpointAuthMethod } from '../db/repositories/oauthProviders';
import { postForm, type FormPostAnswer } from '@graphx/kit/net/formPost';
import { guardedLookup, isRefusedAddress, RefusedDestinationError } from '@graphx/kit/net/outboundPolicy';

/** The token endpoint refused, could not be reached, or answered nonsense. A 400 for the API; `kind` for retries. */
export class TokenEndpointError extends InputError {
  override name = 'TokenEndpointError';
  constructor(
    message: string,
    readonly kind: 'refused' | 'unreachable' | 'invalid_response',
  ) {
    super(message);
  }
}

export interface TokenEndpointClient {
  tokenUrl: string;
  clientId: string;
  /** Plain text; null for `none`. */
  clientSecret: string | null;
  authMethod: TokenEndpointAuthMethod;
  /** Which hosts the token URL may resolve to (src/net/outboundPolicy.ts); `any` only with insecure OAuth on. */
  destinations: 'any' | 'public' | 'public-and-private';
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  tokenType: string | null;
  scopes: string[] | null;
  expiresAt: Date | null;
}

const TIMEOUT_MS = 15_000;
const MAX_RESPONSE_CHARS = 64 * 1024;

/** RFC 6749 §2.3.1: client_id and secret are form-encoded before they are joined for HTTP Basic. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

function withClientAuthentication(
  client: TokenEndpointClient,
  grant: Record<string, string>,
): { headers: Record<string, string>; body: URLSearchParams } {
  const body = new URLSearchParams(grant);
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded',
  };
  if (client.authMethod === 'client_secret_basic') {
    const credentials = `${formEncode(client.clientId)}:${formEncode(client.clientSecret ?? '')}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
  } else {
    body.set('client_id', client.clientId);
    if (client.authMethod === 'client_secret_post') body.set('client_secret', client.clientSecret ?? '');
  }
  return { headers, body };
}

function refusedDestination(address: string): TokenEndpointError {
  return new TokenEndpointError(
    `The token endpoint's host resolves to ${address}, an address the control plane does not send requests to.`,
    'refused',
  );
}

/** Keeps a provider-supplied error text printable and short before it reaches a response or a log. */
function clean(text: unknown): string {
  return typeof text === 'string'
    ? text
        .replace(/[^\x20-\x7E]/g, ' ')
        .slice(0, 200)
        .trim()
    : '';
}

/** Some code hosts still answer form-encoded unless told otherwise; read both. */
function parseBody(text: string, contentType: string): Record<string, unknown> | null {
  try {
    if (contentType.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function toTokenSet(body: Record<string, unknown>): TokenSet {
  const accessToken = body.access_token;
  if (typeof accessToken !== 'string' || accessToken === '') {
    throw new TokenEndpointError('The token endpoint answered without an access_token.', 'invalid_response');
  }
  const expiresIn = Number(body.expires_in);
  const scope = typeof body.scope === 'string' ? body.scope : null;
  return {
    accessToken,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
    tokenType: typeof body.token_type === 'string' ? body.token_type.slice(0, 32) : null,
    // Space-separated per RFC 6749; some code hosts separate with commas.
    scopes: scope === null ? null : scope.split(/[\s,]+/).filter(Boolean),
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000) : null,
  };
}

/**
 * POSTs `grant` (e.g. `{grant_type: 'authorization_code', code, redirect_uri, code_verifier}`) to the token endpoint,
 * authenticated with the client's method, and returns the tokens.
 * @throws TokenEndpointError when refused, unreachable, or the answer is not a token response.
 */
export async function requestTokens(client: TokenEndpointClient, grant: Record<string, string>): Promise<TokenSet> {
  const { headers, body } = withClientAuthentication(client, grant);
  const allowPrivateNetwork = client.destinations === 'public-and-private';
  if (client.destinations !== 'any') {
    // A literal IP never goes through `lookup`, so it is judged here; a name is judged by the lookup at connect time.
    const host = new URL(client.tokenUrl).hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && isRefusedAddress(host, allowPrivateNetwork)) throw refusedDestination(host);
  }
  let response: FormPostAnswer;
  try {
    response = await postForm(client.tokenUrl, {
      headers,
      body: body.toString(),
      timeoutMs: TIMEOUT_MS,
      maxChars: MAX_RESPONSE_CHARS,
      ...(client.destinations === 'any' ? {} : { lookup: guardedLookup(allowPrivateNetwork) }),
    });
  } catch (error) {
    if (error instanceof RefusedDestinationError) throw refusedDestination(error.address);
    const code = (error as { code?: string }).code ?? (error as Error).name;
    throw new TokenEndpointError(`The token endpoint could not be reached (${clean(code)}).`, 'unreachable');
  }
  const parsed = parseBody(response.text, response.contentType);
  if (parsed && typeof parsed.error === 'string') {
    const description = clean(parsed.error_description);
    throw new TokenEndpointError(
      `The token endpoint refused the request: ${clean(parsed.error)}${description ? ` (${description})` : ''}.`,
      'refused',
    );
  }
  if (response.status < 200 || response.status >= 300)
    throw new TokenEndpointError(`The token endpoint answered HTTP ${response.status}.`, 'refused');
  if (!parsed) throw new TokenEndpointError('The token endpoint did not answer with a token response.', 'invalid_response');
  return toTokenSet(parsed);
}
