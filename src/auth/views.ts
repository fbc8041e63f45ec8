/** Response shapes of the auth service: one mapping each, so a secret cannot slip into a response by a spread. */
import type { CodehostIntegrationRecord } from '../db/repositories/integrations';
import type { OAuthProviderRecord } from '../db/repositories/oauthProviders';

/** SPEC §2.5 response; the client secret is not part of it. */
export function providerView(provider: OAuthProviderRecord) {
  return {
    id: provider.id,
    organization_id: provider.tenantId,
    provider_id: provider.providerId,
    name: provider.name,
    client_id: provider.clientId,
    auth_url: provider.authUrl,
    token_url: provider.tokenUrl,
    uses_pkce: provider.usesPkce,
    code_challenge_method: provider.codeChallengeMethod,
    created_at: provider.createdAt.toISOString(),
    updated_at: provider.updatedAt.toISOString(),
    provider_type: provider.providerType,
    mcp_server_url: provider.mcpServerUrl,
    token_endpoint_auth_method: provider.tokenEndpointAuthMethod,
    is_dynamic_client: provider.isDynamicClient,
    has_webhook_secret: provider.webhookSecretEncrypted !== null,
  };
}

export function integrationView(integration: CodehostIntegrationRecord) {
  return {
    id: integration.id,
    provider_id: integration.providerId,
    installation_id: integration.installationId,
    created_at: integration.createdAt.toISOString(),
    updated_at: integration.updatedAt.toISOString(),
  };
}
