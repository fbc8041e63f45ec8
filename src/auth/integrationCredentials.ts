/**
 * Credentials of a code-host integration for cloning a private repository. Owned by the auth service (issue 5).
 */
import type { Db } from '../db/knex';
import type { SecretBox } from '../security/secretBox';

export interface IntegrationCredentialDeps {
  db: Db;
  secretBox: SecretBox;
}

/**
 * Returns a valid access token of the integration (refreshed first when expired), or throws NotFoundError when the
 * integration does not exist in that tenant.
 */
export async function getIntegrationCloneToken(
  _deps: IntegrationCredentialDeps,
  _tenantId: string,
  _integrationId: string,
): Promise<string> {
  throw new Error('code-host integrations are not built yet');
}
