/**
 * The webhook endpoint of code-host integrations: checks a delivery against its provider's webhook secret, then hands
 * a push to `build_on_push` (src/deployments/buildOnPush.ts). The URL names the provider by its id (the `id` of its
 * response); the code-hosting app is configured with it and the secret.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Db } from '../db/knex';
import { OAuthProviderRepository } from '../db/repositories/oauthProviders';
import { createPushRevisions, type PushOutcome } from '../deployments/buildOnPush';
import { DeploymentService, type DeploymentServiceDeps } from '../deployments/service';
import { NotFoundError, UnauthorizedError } from '@graphx/kit/errors';
import { deliveryId, parsePush, signatureValid, webhookEvent } from './pushWebhook';

export type WebhookAnswer = { status: 200; body: { ok: true } } | { status: 202; body: PushOutcome & { event: string } };

/**
 * Handles one delivery. @throws NotFoundError for an unknown provider, UnauthorizedError when the provider has no
 * webhook secret or the signature does not match (nothing in the payload is read before that).
 */
export async function handleCodehostWebhook(
  deps: DeploymentServiceDeps,
  providerPk: string,
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  body: unknown,
): Promise<WebhookAnswer> {
  const provider = await new OAuthProviderRepository(deps.db).findByIdOfAnyTenant(providerPk);
  if (!provider) throw new NotFoundError(`Provider ${providerPk} not found.`);
  if (!provider.webhookSecretEncrypted) {
    throw new UnauthorizedError(`Provider ${providerPk} has no webhook secret: set webhook_secret on it first.`);
  }
  if (!signatureValid(headers, rawBody, deps.secretBox.decrypt(provider.webhookSecretEncrypted))) {
    throw new UnauthorizedError('Invalid webhook signature.');
  }
  const event = webhookEvent(headers) ?? 'unknown';
  if (event === 'ping') return { status: 200, body: { ok: true } };
  const push = event === 'push' ? parsePush(body) : null;
  if (!push) return { status: 202, body: { event, duplicate: false, revisions: [] } };
  const tenantIds = await integrationTenants(deps.db, provider.id, provider.tenantId, push.installationId);
  const outcome = await createPushRevisions(deps, new DeploymentService(deps), {
    providerPk: provider.id,
    deliveryId: deliveryId(headers, rawBody),
    tenantIds,
    push,
  });
  return { status: 202, body: { event, ...outcome } };
}

/**
 * The tenants a push is for: those with an integration of this provider for the push's installation (a GitHub App
 * is installed per account), or the provider's own tenant when the code host has no installations (Gitea, Forgejo).
 */
async function integrationTenants(
  db: Db,
  providerPk: string,
  providerTenantId: string,
  installationId: number | null,
): Promise<string[]> {
  if (installationId === null) return [providerTenantId];
  return db('codehost_integrations')
    .where({ provider_pk: providerPk, installation_id: installationId })
    .distinct()
    .pluck('tenant_id');
}
