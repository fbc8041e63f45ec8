/**
 * Credentials of a code-host integration for cloning a private repository. Owned by the auth service (issue 5).
 */
import type { GraphxConfig } from '../config';
import type { Db } from '../db/knex';
import { CodehostIntegrationRepository } from '../db/repositories/integrations';
import { OAuthProviderRepository } from '../db/repositories/oauthProviders';
import { OAuthTokenRepository, type OAuthTokenRecord } from '../db/repositories/oauthTokens';
import { InputError, NotFoundError } from '@graphx/kit/errors';
import type { SecretBox } from '../security/secretBox';
import { encryptTokenSet, tokenClientOf } from './providerClient';
import { requestTokens } from './tokenEndpoint';

export interface IntegrationCredentialDeps {
  db: Db;
  secretBox: SecretBox;
  config: Pick<GraphxConfig, 'allowInsecureOauth' | 'allowPrivateNetwork'>;
}

/** Refresh this long before the recorded expiry, so a token does not die in the middle of a clone. */
const EXPIRY_MARGIN_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const integrationNotFound = (id: string) => new NotFoundError(`Integration ${id} not found.`);

function isFresh(token: OAuthTokenRecord): boolean {
  return token.expiresAt === null || token.expiresAt.getTime() - EXPIRY_MARGIN_MS > Date.now();
}

/**
 * Returns a valid access token of the integration (refreshed first when expired), or throws NotFoundError when the
 * integration does not exist in that tenant.
 * @throws NotFoundError for an unknown integration or another tenant's.
 * @throws InputError (a TokenEndpointError when the provider refused or was unreachable) when an expired token cannot
 *   be refreshed: the user must authorize the integration again.
 */
export async function getIntegrationCloneToken(
  deps: IntegrationCredentialDeps,
  tenantId: string,
  integrationId: string,
): Promise<string> {
  // Not a UUID cannot be ours, and must not reach PostgreSQL as a uuid parameter (that would be a 500).
  if (!UUID.test(integrationId)) throw integrationNotFound(integrationId);
  const integration = await new CodehostIntegrationRepository(deps.db).find(tenantId, integrationId);
  if (!integration) throw integrationNotFound(integrationId);
  const current = await new OAuthTokenRepository(deps.db).find(tenantId, integration.tokenId);
  if (!current) throw integrationNotFound(integrationId);
  if (isFresh(current)) return deps.secretBox.decrypt(current.accessTokenEncrypted);

  // The row lock makes concurrent clones queue behind one refresh: with rotating refresh tokens a second refresh with
  // the old refresh token would be refused. The lock is held across one token request (bounded by its timeout).
  return deps.db.transaction(async (trx) => {
    const tokens = new OAuthTokenRepository(trx);
    const locked = await tokens.find(tenantId, integration.tokenId, { forUpdate: true });
    if (!locked) throw integrationNotFound(integrationId);
    if (isFresh(locked)) return deps.secretBox.decrypt(locked.accessTokenEncrypted);
    if (!locked.refreshTokenEncrypted) {
      throw new InputError(`The token of integration ${integrationId} expired and cannot be refreshed; authorize the app again.`);
    }
    const provider = await new OAuthProviderRepository(trx).findById(tenantId, integration.providerPk);
    if (!provider) throw integrationNotFound(integrationId);
    const refreshed = await requestTokens(tokenClientOf(provider, deps.secretBox, deps.config), {
      grant_type: 'refresh_token',
      refresh_token: deps.secretBox.decrypt(locked.refreshTokenEncrypted),
    });
    await tokens.replace(tenantId, locked.id, encryptTokenSet(refreshed, deps.secretBox));
    return refreshed.accessToken;
  });
}
