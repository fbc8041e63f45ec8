/** Glue between stored providers/tokens (ciphertext) and the token endpoint client (plain text, in memory only). */
import type { GraphxConfig } from '../config';
import type { OAuthProviderRecord } from '../db/repositories/oauthProviders';
import type { EncryptedTokenSet } from '../db/repositories/oauthTokens';
import type { SecretBox } from '../security/secretBox';
import type { TokenEndpointClient, TokenSet } from './tokenEndpoint';

/** The provider as a token endpoint client, its secret decrypted for this one use. */
export function tokenClientOf(
  provider: OAuthProviderRecord,
  secretBox: SecretBox,
  config: Pick<GraphxConfig, 'allowInsecureOauth' | 'allowPrivateNetwork'>,
): TokenEndpointClient {
  return {
    destinations: config.allowInsecureOauth ? 'any' : config.allowPrivateNetwork ? 'public-and-private' : 'public',
    tokenUrl: provider.tokenUrl,
    clientId: provider.clientId,
    clientSecret: provider.clientSecretEncrypted ? secretBox.decrypt(provider.clientSecretEncrypted) : null,
    authMethod: provider.tokenEndpointAuthMethod,
  };
}

/** Encrypts both tokens of a token response for storage. */
export function encryptTokenSet(tokens: TokenSet, secretBox: SecretBox): EncryptedTokenSet {
  return {
    accessTokenEncrypted: secretBox.encrypt(tokens.accessToken),
    refreshTokenEncrypted: tokens.refreshToken ? secretBox.encrypt(tokens.refreshToken) : null,
    tokenType: tokens.tokenType,
    scopes: tokens.scopes,
    expiresAt: tokens.expiresAt,
  };
}
