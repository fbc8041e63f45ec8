/**
 * The authorization flow (CONTRACT §3): start an attempt and hand out the provider's URL, finish it when the browser
 * comes back with `code` and `state`, and let API clients wait for the outcome. The callback has no API key: the
 * signed, single-use state is what names the attempt, and through it the tenant.
 */
import crypto from 'node:crypto';
import { CodehostIntegrationRepository } from '../db/repositories/integrations';
import { OAuthAttemptRepository, type OAuthAttemptRecord } from '../db/repositories/oauthAttempts';
import { OAuthProviderRepository, type OAuthProviderRecord } from '../db/repositories/oauthProviders';
import { OAuthTokenRepository } from '../db/repositories/oauthTokens';
import { InputError } from '@graphx/kit/errors';
import { createPkcePair, decodeState, encodeState } from './authState';
import { encryptTokenSet, tokenClientOf } from './providerClient';
import type { AuthServiceDeps } from './providerService';
import { ProviderService } from './providerService';
import type { AuthenticateBody } from './schemas';
import { requestTokens } from './tokenEndpoint';

/** How long a state is good for. */
export const STATE_TTL_MS = 10 * 60 * 1000;
const WAIT_POLL_MS = 250;

export type WaitStatus = 'completed' | 'pending' | 'timeout' | 'not_found';

export interface FinishedAuthorization {
  authId: string;
  tenantId: string;
  providerId: string;
  integrationId: string | null;
}

const invalidState = () => new InputError('Invalid state parameter.');

export class AuthorizationFlow {
  private readonly providerService: ProviderService;

  constructor(private readonly deps: AuthServiceDeps) {
    this.providerService = new ProviderService(deps);
  }

  /** The redirect URI registered at the provider for this provider id. */
  callbackUrl(providerId: string): string {
    return `${this.deps.config.publicUrl.replace(/\/+$/, '')}/v2/auth/callback/${encodeURIComponent(providerId)}`;
  }

  /** Starts an attempt: `pending` with the provider's authorization URL (state, and with PKCE an S256 challenge). */
  async start(tenantId: string, body: AuthenticateBody): Promise<{ status: 'pending'; url: string; auth_id: string }> {
    const provider = await this.providerService.require(tenantId, body.provider);
    const authId = crypto.randomUUID();
    const expiresAt = Date.now() + STATE_TTL_MS;
    const pkce = provider.usesPkce ? createPkcePair() : null;
    const redirectUri = this.callbackUrl(provider.providerId);
    await new OAuthAttemptRepository(this.deps.db).insert({
      id: authId,
      tenantId,
      providerPk: provider.id,
      scopes: body.scopes,
      pkceVerifierEncrypted: pkce ? this.deps.secretBox.encrypt(pkce.verifier) : null,
      redirectUri,
      expiresAt: new Date(expiresAt),
    });
    const url = new URL(provider.authUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', provider.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    if (body.scopes.length > 0) url.searchParams.set('scope', body.scopes.join(' '));
    url.searchParams.set('state', encodeState(this.deps.secretBox, { authId, providerPk: provider.id, expiresAt }));
    if (pkce) {
      url.searchParams.set('code_challenge', pkce.challenge);
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return { status: 'pending', url: url.toString(), auth_id: authId };
  }

  /**
   * Finishes an attempt with the code from the provider: consumes the state, exchanges the code with the provider's
   * client-auth method (and the PKCE verifier), stores the tokens encrypted and, for an app installation, records the
   * integration. Any failure leaves the attempt failed and nothing stored.
   * @throws InputError for a bad, reused, expired or foreign state, or a refused exchange.
   */
  async finish(
    pathProviderId: string,
    input: { code: string; state: string; installationId?: number },
  ): Promise<FinishedAuthorization> {
    const { attempt, provider } = await this.consumeState(pathProviderId, input.state);
    const attempts = new OAuthAttemptRepository(this.deps.db);
    let tokens;
    try {
      tokens = await requestTokens(tokenClientOf(provider, this.deps.secretBox, this.deps.config), {
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: attempt.redirectUri ?? this.callbackUrl(provider.providerId),
        ...(attempt.pkceVerifierEncrypted ? { code_verifier: this.deps.secretBox.decrypt(attempt.pkceVerifierEncrypted) } : {}),
      });
    } catch (error) {
      await attempts.markFailed(attempt.id, (error as Error).message);
      throw error;
    }
    const integrationId = await this.deps.db.transaction(async (trx) => {
      const tokenId = crypto.randomUUID();
      await new OAuthTokenRepository(trx).insert({
        id: tokenId,
        tenantId: attempt.tenantId,
        providerPk: provider.id,
        attemptId: attempt.id,
        ...encryptTokenSet({ ...tokens, scopes: tokens.scopes ?? attempt.scopes }, this.deps.secretBox),
      });
      // The installation id comes from the browser and could be forged; it is recorded only now, bound to a token
      // that the provider just issued for this tenant's attempt.
      const recorded = input.installationId
        ? await new CodehostIntegrationRepository(trx).upsert({
            id: crypto.randomUUID(),
            tenantId: attempt.tenantId,
            providerPk: provider.id,
            installationId: input.installationId,
            tokenId,
          })
        : null;
      await new OAuthAttemptRepository(trx).markCompleted(attempt.id);
      return recorded;
    });
    return { authId: attempt.id, tenantId: attempt.tenantId, providerId: provider.providerId, integrationId };
  }

  /**
   * The provider sent the user back with `error`: the attempt (if the state is good) fails, nothing is stored.
   * @throws InputError always, describing the provider's error.
   */
  async failFromProvider(
    pathProviderId: string,
    input: { state?: string; error: string; errorDescription?: string },
  ): Promise<never> {
    const reason = `Authorization failed at the provider: ${printable(input.error)}${
      input.errorDescription ? ` (${printable(input.errorDescription)})` : ''
    }.`;
    if (input.state) {
      const consumed = await this.consumeState(pathProviderId, input.state).catch(() => null);
      if (consumed) await new OAuthAttemptRepository(this.deps.db).markFailed(consumed.attempt.id, reason);
    }
    throw new InputError(reason);
  }

  /**
   * Long-polls the attempt: `completed`, `not_found` (unknown, another tenant's, expired or failed; `message` says
   * which), `timeout` after `timeoutSeconds`, or `pending` when asked not to wait. Stops early when `signal` aborts.
   */
  async wait(tenantId: string, authId: string, timeoutSeconds: number, signal?: AbortSignal) {
    const attempts = new OAuthAttemptRepository(this.deps.db);
    const deadline = Date.now() + timeoutSeconds * 1000;
    for (;;) {
      const attempt = await attempts.find(tenantId, authId);
      const outcome = outcomeOf(attempt);
      if (outcome) return { auth_id: authId, ...outcome };
      if (Date.now() >= deadline || signal?.aborted) {
        return { auth_id: authId, status: (timeoutSeconds === 0 ? 'pending' : 'timeout') as WaitStatus };
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now()))));
    }
  }

  /** Verifies the signature, the attempt, its provider and expiry, then marks the state used (once, atomically). */
  private async consumeState(
    pathProviderId: string,
    state: string,
  ): Promise<{ attempt: OAuthAttemptRecord; provider: OAuthProviderRecord }> {
    const payload = decodeState(this.deps.secretBox, state);
    if (!payload) throw invalidState();
    const attempt = await new OAuthAttemptRepository(this.deps.db).findForCallback(payload.authId);
    if (!attempt || attempt.providerPk !== payload.providerPk) throw invalidState();
    const provider = await new OAuthProviderRepository(this.deps.db).findById(attempt.tenantId, attempt.providerPk);
    if (!provider || provider.providerId !== pathProviderId) {
      throw new InputError(`The state does not belong to provider ${pathProviderId}.`);
    }
    if (payload.expiresAt <= Date.now() || attempt.expiresAt.getTime() <= Date.now()) {
      throw new InputError('The authorization attempt has expired; start it again.');
    }
    if (!(await new OAuthAttemptRepository(this.deps.db).consume(attempt.id))) {
      throw new InputError('The state was already used; start the authorization again.');
    }
    return { attempt, provider };
  }
}

function outcomeOf(attempt: OAuthAttemptRecord | null): { status: WaitStatus; message?: string } | null {
  if (!attempt) return { status: 'not_found', message: 'No such authorization attempt.' };
  if (attempt.status === 'completed') return { status: 'completed' };
  if (attempt.status === 'failed') return { status: 'not_found', message: attempt.failureReason ?? 'The authorization failed.' };
  if (attempt.expiresAt.getTime() <= Date.now())
    return { status: 'not_found', message: 'The authorization attempt has expired.' };
  return null;
}

function printable(text: string): string {
  return text
    .replace(/[^\x20-\x7E]/g, ' ')
    .slice(0, 200)
    .trim();
}
