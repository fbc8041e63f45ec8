/** Code-host integrations as the API shows them. */
import type { Db } from '../db/knex';
import { CodehostIntegrationRepository } from '../db/repositories/integrations';
import { integrationView } from './views';

/** Lists the tenant's integrations, oldest first; ids are what `source_config.integration_id` takes. */
export async function listIntegrations(db: Db, tenantId: string, page: { limit: number; offset: number }) {
  const resources = (await new CodehostIntegrationRepository(db).list(tenantId, page)).map(integrationView);
  return { resources, offset: page.offset + resources.length };
}
