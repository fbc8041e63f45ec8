/** Joi schemas of the auth service (SPEC §2.5, §4.1, §4.2; CONTRACT §3); they also feed /openapi.json. */
import Joi from 'joi';

export const PROVIDER_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,99}$/;
export const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export const PROVIDER_TYPES = ['vendor_a', 'vendor_b'] as const;
/** Only S256: `plain` would put the verifier itself in the browser's URL. */
export const CODE_CHALLENGE_METHODS = ['S256'] as const;

const providerSlug = Joi.string().pattern(PROVIDER_ID_PATTERN, 'provider id (lowercase letters, digits, - and _)');
const oauthUrl = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(2000);

export interface ProviderCreateBody {
  provider_id: string;
  name: string;
  client_id: string;
  client_secret?: string | null;
  auth_url: string;
  token_url: string;
  uses_pkce: boolean;
  code_challenge_method: string;
  token_endpoint_auth_method: (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
  provider_type: (typeof PROVIDER_TYPES)[number] | null;
  webhook_secret?: string | null;
}

/** The secret a code-hosting app signs its webhook deliveries with (write-only: never returned). */
const webhookSecret = Joi.string()
  .min(8)
  .max(2000)
  .allow(null)
  .description('Secret the code-hosting app signs webhook deliveries with (HMAC-SHA256); write-only.');

export const providerCreateBody = Joi.object<ProviderCreateBody>({
  provider_id: providerSlug.required(),
  name: Joi.string().min(1).max(200).required(),
  client_id: Joi.string().min(1).max(500).required(),
  client_secret: Joi.string().min(1).max(2000).allow(null),
  auth_url: oauthUrl.required(),
  token_url: oauthUrl.required(),
  uses_pkce: Joi.boolean().default(false),
  code_challenge_method: Joi.string()
    .valid(...CODE_CHALLENGE_METHODS)
    .default('S256'),
  token_endpoint_auth_method: Joi.string()
    .valid(...TOKEN_ENDPOINT_AUTH_METHODS)
    .default('client_secret_post'),
  provider_type: Joi.string()
    .valid(...PROVIDER_TYPES)
    .allow(null)
    .default(null),
  webhook_secret: webhookSecret,
}).required();

export interface ProviderUpdateBody {
  name?: string | null;
  client_id?: string | null;
  client_secret?: string | null;
  auth_url?: string | null;
  token_url?: string | null;
  uses_pkce?: boolean | null;
  code_challenge_method?: string | null;
  provider_id?: string;
  provider_type?: string | null;
  token_endpoint_auth_method?: string;
  webhook_secret?: string | null;
}

/** Null means "leave as is". The immutable fields are accepted only to answer a clear 400 when they differ. */
export const providerUpdateBody = Joi.object<ProviderUpdateBody>({
  name: Joi.string().min(1).max(200).allow(null),
  client_id: Joi.string().min(1).max(500).allow(null),
  client_secret: Joi.string().min(1).max(2000).allow(null),
  auth_url: oauthUrl.allow(null),
  token_url: oauthUrl.allow(null),
  uses_pkce: Joi.boolean().allow(null),
  code_challenge_method: Joi.string()
    .valid(...CODE_CHALLENGE_METHODS)
    .allow(null),
  provider_id: Joi.string(),
  provider_type: Joi.string().allow(null),
  token_endpoint_auth_method: Joi.string(),
  webhook_secret: webhookSecret,
}).required();

export const providerResponse = Joi.object({
  id: Joi.string().uuid(),
  organization_id: Joi.string().uuid(),
  provider_id: Joi.string(),
  name: Joi.string(),
  client_id: Joi.string(),
  auth_url: Joi.string(),
  token_url: Joi.string(),
  uses_pkce: Joi.boolean(),
  code_challenge_method: Joi.string().allow(null),
  created_at: Joi.string().isoDate(),
  updated_at: Joi.string().isoDate(),
  provider_type: Joi.string().allow(null),
  mcp_server_url: Joi.string().allow(null),
  token_endpoint_auth_method: Joi.string().valid(...TOKEN_ENDPOINT_AUTH_METHODS),
  is_dynamic_client: Joi.boolean(),
  has_webhook_secret: Joi.boolean().description(
    'Whether push webhooks (POST /v1/integrations/codehost/webhook/{id}) can be verified.',
  ),
});

export const providerParams = Joi.object({ provider_id: providerSlug.required() });

export const pageQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(100).default(20),
  offset: Joi.number().integer().min(0).default(0),
});

export interface AuthenticateBody {
  provider: string;
  scopes: string[];
  user_id?: string | null;
  agent_id?: string | null;
  force_new?: boolean;
}

export const authenticateBody = Joi.object<AuthenticateBody>({
  provider: providerSlug.required(),
  scopes: Joi.array()
    .items(
      Joi.string()
        .pattern(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'scope token')
        .max(200),
    )
    .max(50)
    .required(),
  // Accepted for compatibility with clients of the real service; tokens here belong to the tenant.
  user_id: Joi.string().max(200).allow(null),
  agent_id: Joi.string().max(200).allow(null),
  force_new: Joi.boolean(),
}).required();

export const authenticateResponse = Joi.object({
  status: Joi.string().valid('pending'),
  url: Joi.string(),
  auth_id: Joi.string().uuid(),
});

export const waitParams = Joi.object({ auth_id: Joi.string().uuid().required() });
export const waitQuery = Joi.object({ timeout: Joi.number().integer().min(0).max(300).default(30) });
export const waitResponse = Joi.object({
  status: Joi.string().valid('completed', 'pending', 'timeout', 'not_found'),
  auth_id: Joi.string().uuid(),
  message: Joi.string(),
});

export interface CallbackQuery {
  code?: string;
  state?: string;
  setup_action?: 'install' | 'update' | 'request';
  installation_id?: number;
  error?: string;
  error_description?: string;
}

/** SPEC §4.2: every parameter optional; `installation_id` an integer. The callback takes the same set. */
export const callbackQuery = Joi.object<CallbackQuery>({
  code: Joi.string().max(2000),
  state: Joi.string().max(2000),
  setup_action: Joi.string().valid('install', 'update', 'request'),
  installation_id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER),
  error: Joi.string().max(200),
  error_description: Joi.string().max(2000),
});

export const callbackResponse = Joi.object({
  status: Joi.string().valid('completed', 'updated', 'pending_approval', 'installed'),
  message: Joi.string(),
  auth_id: Joi.string().uuid(),
  provider_id: Joi.string(),
  integration_id: Joi.string().uuid().allow(null),
});

export const integrationResponse = Joi.object({
  id: Joi.string().uuid(),
  provider_id: Joi.string(),
  installation_id: Joi.number().integer(),
  created_at: Joi.string().isoDate(),
  updated_at: Joi.string().isoDate(),
});
