/** OAuth providers of a tenant (CONTRACT §3): create, read, change, delete. The client secret is encrypted here. */
import crypto from 'node:crypto';
import type { GraphxConfig } from '../config';
import type { Db } from '../db/knex';
import { OAuthProviderRepository, type OAuthProviderRecord } from '../db/repositories/oauthProviders';
import { ConflictError, InputError, providerNotFound, ValidationError } from '@graphx/kit/errors';
import type { SecretBox } from '../security/secretBox';
import { assertOAuthUrls } from './oauthUrls';
import type { ProviderCreateBody, ProviderUpdateBody } from './schemas';
import { providerView } from './views';

export interface AuthServiceDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
}

const UNIQUE_VIOLATION = '23505';

export class ProviderService {
  private readonly providers: OAuthProviderRepository;

  constructor(private readonly deps: AuthServiceDeps) {
    this.providers = new OAuthProviderRepository(deps.db);
  }

  /** Creates a provider; `client_secret` is required unless the client is public (`none`). */
  async create(tenantId: string, body: ProviderCreateBody) {
    assertOAuthUrls({ auth_url: body.auth_url, token_url: body.token_url }, this.deps.config.allowInsecureOauth);
    const isPublic = body.token_endpoint_auth_method === 'none';
    if (!isPublic && !body.client_secret) {
      throw new ValidationError([
        {
          loc: ['body', 'client_secret'],
          msg: `Field required when token_endpoint_auth_method is ${body.token_endpoint_auth_method}`,
          type: 'missing',
        },
      ]);
    }
    try {
      const created = await this.providers.insert({
        id: crypto.randomUUID(),
        tenantId,
        providerId: body.provider_id,
        name: body.name,
        clientId: body.client_id,
        // A public client has no secret to keep, even if one was sent.
        clientSecretEncrypted: !isPublic && body.client_secret ? this.deps.secretBox.encrypt(body.client_secret) : null,
        authUrl: body.auth_url,
        tokenUrl: body.token_url,
        usesPkce: body.uses_pkce,
        codeChallengeMethod: body.code_challenge_method,
        tokenEndpointAuthMethod: body.token_endpoint_auth_method,
        providerType: body.provider_type,
        mcpServerUrl: null,
        isDynamicClient: false,
        webhookSecretEncrypted: body.webhook_secret ? this.deps.secretBox.encrypt(body.webhook_secret) : null,
      });
      return providerView(created);
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
        throw new ConflictError(`Provider ${body.provider_id} already exists.`);
      }
      throw error;
    }
  }

  async list(tenantId: string, page: { limit: number; offset: number }) {
    const resources = (await this.providers.list(tenantId, page)).map(providerView);
    return { resources, offset: page.offset + resources.length };
  }

  async get(tenantId: string, providerId: string) {
    return providerView(await this.require(tenantId, providerId));
  }

  /** Changes the given fields; `provider_id`, `provider_type` and `token_endpoint_auth_method` cannot change. */
  async update(tenantId: string, providerId: string, body: ProviderUpdateBody) {
    const current = await this.require(tenantId, providerId);
    rejectImmutableChanges(current, body);
    assertOAuthUrls({ auth_url: body.auth_url, token_url: body.token_url }, this.deps.config.allowInsecureOauth);
    const isPublic = current.tokenEndpointAuthMethod === 'none';
    const updated = await this.providers.update(tenantId, current.id, {
      name: body.name ?? undefined,
      clientId: body.client_id ?? undefined,
      clientSecretEncrypted: !isPublic && body.client_secret ? this.deps.secretBox.encrypt(body.client_secret) : undefined,
      authUrl: body.auth_url ?? undefined,
      tokenUrl: body.token_url ?? undefined,
      usesPkce: body.uses_pkce ?? undefined,
      codeChallengeMethod: body.code_challenge_method ?? undefined,
      webhookSecretEncrypted: body.webhook_secret ? this.deps.secretBox.encrypt(body.webhook_secret) : undefined,
    });
    if (!updated) throw providerNotFound(providerId);
    return providerView(updated);
  }

  async delete(tenantId: string, providerId: string): Promise<{ message: string }> {
    const current = await this.require(tenantId, providerId);
    if (!(await this.providers.delete(tenantId, current.id))) throw providerNotFound(providerId);
    return { message: 'Provider deleted' };
  }

  /** The tenant's provider, or 404 `Provider <id> not found.` (another tenant's answers the same). */
  async require(tenantId: string, providerId: string): Promise<OAuthProviderRecord> {
    const provider = await this.providers.findBySlug(tenantId, providerId);
    if (!provider) throw providerNotFound(providerId);
    return provider;
  }
}

function rejectImmutableChanges(current: OAuthProviderRecord, body: ProviderUpdateBody): void {
  const changed = [
    body.provider_id !== undefined && body.provider_id !== current.providerId ? 'provider_id' : null,
    body.provider_type !== undefined && body.provider_type !== current.providerType ? 'provider_type' : null,
    body.token_endpoint_auth_method !== undefined && body.token_endpoint_auth_method !== current.tokenEndpointAuthMethod
      ? 'token_endpoint_auth_method'
      : null,
  ].filter(Boolean);
  if (changed.length > 0) {
    throw new InputError(`${changed.join(', ')} cannot be changed; create a new provider instead.`);
  }
}
