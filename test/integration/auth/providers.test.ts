import { startAuthStack, type AuthStack } from './authStack';

describe('OAuth providers API', () => {
  let stack: AuthStack;
  let apiKey: string;
  let tenantId: string;

  const body = (overrides: Record<string, unknown> = {}) => ({
    provider_id: 'github-local-dev',
    name: 'Code host',
    client_id: 'client-1',
    client_secret: 'very-secret-value-1',
    auth_url: 'https://codehost.example/login/oauth/authorize',
    token_url: 'https://codehost.example/login/oauth/access_token',
    ...overrides,
  });

  beforeAll(async () => {
    stack = await startAuthStack();
    ({ apiKey, tenantId } = await stack.tenant('providers'));
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('creates a provider with 200, the contract defaults, and no secret in the response', async () => {
    const created = await stack.api('/v2/auth/providers', { method: 'POST', apiKey, body: body() });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      organization_id: tenantId,
      provider_id: 'github-local-dev',
      name: 'Code host',
      client_id: 'client-1',
      auth_url: 'https://codehost.example/login/oauth/authorize',
      token_url: 'https://codehost.example/login/oauth/access_token',
      uses_pkce: false,
      code_challenge_method: 'S256',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      provider_type: null,
      mcp_server_url: null,
      token_endpoint_auth_method: 'client_secret_post',
      is_dynamic_client: false,
      has_webhook_secret: false,
    });
    expect(created.text).not.toContain('very-secret-value-1');
  });

  it('keeps the client secret only encrypted in the database', async () => {
    const row = await stack.db('oauth_providers').where({ tenant_id: tenantId, provider_id: 'github-local-dev' }).first();
    expect(row.client_secret_encrypted).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain('very-secret-value-1');
    expect(stack.secretBox.decrypt(row.client_secret_encrypted)).toBe('very-secret-value-1');
  });

  it('lists, reads, patches and deletes a provider, never showing the secret', async () => {
    const listed = await stack.api('/v2/auth/providers', { apiKey });
    expect(listed.body).toMatchObject({ resources: [{ provider_id: 'github-local-dev' }], offset: 1 });
    const read = await stack.api('/v2/auth/providers/github-local-dev', { apiKey });
    expect(read.body.name).toBe('Code host');

    const patched = await stack.api('/v2/auth/providers/github-local-dev', {
      method: 'PATCH',
      apiKey,
      body: { name: 'Renamed', client_secret: 'rotated-secret-2', uses_pkce: true, auth_url: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Renamed',
      uses_pkce: true,
      auth_url: 'https://codehost.example/login/oauth/authorize',
    });
    expect(patched.text).not.toContain('rotated-secret-2');
    const row = await stack.db('oauth_providers').where({ tenant_id: tenantId, provider_id: 'github-local-dev' }).first();
    expect(stack.secretBox.decrypt(row.client_secret_encrypted)).toBe('rotated-secret-2');

    await stack.api('/v2/auth/providers', { method: 'POST', apiKey, body: body({ provider_id: 'to-delete' }) });
    const deleted = await stack.api('/v2/auth/providers/to-delete', { method: 'DELETE', apiKey });
    expect(deleted).toMatchObject({ status: 200, body: { message: 'Provider deleted' } });
    expect((await stack.api('/v2/auth/providers/to-delete', { apiKey })).status).toBe(404);
  });

  it('answers 409 to a provider_id taken in the tenant, and lets another tenant use it', async () => {
    const again = await stack.api('/v2/auth/providers', { method: 'POST', apiKey, body: body() });
    expect(again).toMatchObject({ status: 409, body: { detail: 'Provider github-local-dev already exists.' } });
    const other = await stack.tenant('providers-other');
    expect((await stack.api('/v2/auth/providers', { method: 'POST', apiKey: other.apiKey, body: body() })).status).toBe(200);
  });

  it("hides one tenant's providers from another with 404", async () => {
    const other = await stack.tenant('providers-stranger');
    const read = await stack.api('/v2/auth/providers/github-local-dev', { apiKey: other.apiKey });
    expect(read).toMatchObject({ status: 404, body: { detail: 'Provider github-local-dev not found.' } });
    expect(
      (await stack.api('/v2/auth/providers/github-local-dev', { method: 'PATCH', apiKey: other.apiKey, body: { name: 'x' } }))
        .status,
    ).toBe(404);
    expect((await stack.api('/v2/auth/providers/github-local-dev', { method: 'DELETE', apiKey: other.apiKey })).status).toBe(404);
    expect((await stack.api('/v2/auth/providers', { apiKey: other.apiKey })).body.resources).toEqual([]);
    expect((await stack.api('/v2/auth/providers/github-local-dev', { apiKey })).status).toBe(200);
  });

  it('answers 422 in the pydantic shape for missing fields, a bad enum and a bad slug', async () => {
    const answer = await stack.api('/v2/auth/providers', {
      method: 'POST',
      apiKey,
      body: { provider_id: 'Not A Slug', token_endpoint_auth_method: 'private_key_jwt', provider_type: 'vendor_c' },
    });
    expect(answer.status).toBe(422);
    const byField = Object.fromEntries(answer.body.detail.map((issue: any) => [issue.loc.join('.'), issue.type]));
    expect(byField).toMatchObject({
      'body.provider_id': 'string_pattern_mismatch',
      'body.name': 'missing',
      'body.client_id': 'missing',
      'body.auth_url': 'missing',
      'body.token_url': 'missing',
      'body.token_endpoint_auth_method': 'enum',
      'body.provider_type': 'enum',
    });
  });

  it('requires client_secret unless the client is public, and keeps none for a public client', async () => {
    const missing = await stack.api('/v2/auth/providers', {
      method: 'POST',
      apiKey,
      body: body({ provider_id: 'no-secret', client_secret: undefined }),
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'client_secret'], type: 'missing' })]);
    const publicClient = await stack.api('/v2/auth/providers', {
      method: 'POST',
      apiKey,
      body: body({ provider_id: 'public', client_secret: 'ignored', token_endpoint_auth_method: 'none' }),
    });
    expect(publicClient.status).toBe(200);
    const row = await stack.db('oauth_providers').where({ tenant_id: tenantId, provider_id: 'public' }).first();
    expect(row.client_secret_encrypted).toBeNull();
  });

  it('accepts http://127.0.0.1 URLs only when insecure OAuth is allowed, and never other http hosts', async () => {
    const local = body({
      provider_id: 'local',
      auth_url: 'http://127.0.0.1:9999/auth',
      token_url: 'http://localhost:9999/token',
    });
    expect((await stack.api('/v2/auth/providers', { method: 'POST', apiKey, body: local })).status).toBe(200);
    const remote = await stack.api('/v2/auth/providers', {
      method: 'POST',
      apiKey,
      body: body({ provider_id: 'remote-http', token_url: 'http://codehost.example/token' }),
    });
    expect(remote.status).toBe(422);
    expect(remote.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'token_url'], type: 'url_scheme' })]);

    const strict = await startAuthStack({ env: { GRAPHX_ALLOW_INSECURE_OAUTH: '0' } });
    try {
      const strictTenant = await strict.tenant('strict');
      const refused = await strict.api('/v2/auth/providers', { method: 'POST', apiKey: strictTenant.apiKey, body: local });
      expect(refused.status).toBe(422);
      expect(refused.body.detail.map((issue: any) => issue.loc[1])).toEqual(['auth_url', 'token_url']);
      expect(refused.body.detail[0].msg).toBe("URL scheme should be 'https'");
    } finally {
      await strict.stop();
    }
  });

  it('answers 400 when a PATCH tries to change an immutable field', async () => {
    const answer = await stack.api('/v2/auth/providers/github-local-dev', {
      method: 'PATCH',
      apiKey,
      body: { token_endpoint_auth_method: 'none' },
    });
    expect(answer).toMatchObject({
      status: 400,
      body: { detail: 'token_endpoint_auth_method cannot be changed; create a new provider instead.' },
    });
  });

  it('requires X-Api-Key on every provider route and documents the auth routes in /openapi.json', async () => {
    expect((await stack.api('/v2/auth/providers')).status).toBe(401);
    expect((await stack.api('/v2/auth/providers', { method: 'POST', body: body() })).status).toBe(401);
    expect((await stack.api('/v1/integrations/codehost/install')).status).toBe(401);
    const spec = await stack.api('/openapi.json');
    for (const path of [
      '/v2/auth/providers',
      '/v2/auth/providers/{provider_id}',
      '/v2/auth/authenticate',
      '/v2/auth/wait/{auth_id}',
      '/v2/auth/callback/{provider_id}',
      '/v2/auth/setup/{provider_id}',
      '/v1/integrations/codehost/install',
    ]) {
      expect(spec.body.paths).toHaveProperty([path]);
    }
    expect(JSON.stringify(spec.body.paths['/v2/auth/providers'].post)).not.toContain('client_secret_encrypted');
  });
});
