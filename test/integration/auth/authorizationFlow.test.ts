import { pathOf, startAuthStack, type AuthStack } from './authStack';
import type { TokenEndpointAuthMethod } from '../../support/oauthServer';

describe('the authorization flow against a real OAuth 2 server', () => {
  let stack: AuthStack;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startAuthStack();
    ({ apiKey } = await stack.tenant('flow'));
    for (const [providerId, method] of [
      ['idp-basic', 'client_secret_basic'],
      ['idp-post', 'client_secret_post'],
      ['idp-none', 'none'],
    ] as const) {
      expect((await stack.createProvider(apiKey, providerId, method)).status).toBe(200);
    }
  });
  afterAll(async () => {
    await stack.stop();
  });

  const tokensOf = (authId: string) => stack.db('oauth_tokens').where({ attempt_id: authId });

  it.each<[string, TokenEndpointAuthMethod]>([
    ['idp-basic', 'client_secret_basic'],
    ['idp-post', 'client_secret_post'],
    ['idp-none', 'none'],
  ])('completes authenticate → consent → callback → wait with %s (%s) and stores only encrypted tokens', async (providerId) => {
    const { authId, callback } = await stack.authorize(apiKey, providerId);
    expect(callback.searchParams.get('code')).toBeTruthy();

    const finished = await stack.api(pathOf(callback));
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ status: 'completed', auth_id: authId, provider_id: providerId });

    const waited = await stack.api(`/v2/auth/wait/${authId}?timeout=5`, { apiKey });
    expect(waited.body).toEqual({ auth_id: authId, status: 'completed' });

    const [token] = await tokensOf(authId);
    expect(token.access_token_encrypted).toMatch(/^v1:/);
    const accessToken = stack.secretBox.decrypt(token.access_token_encrypted);
    expect(await stack.oauth.isActiveToken(accessToken)).toBe(true);
    expect(finished.text).not.toContain(accessToken);
    expect(waited.text).not.toContain(accessToken);
  });

  it('sends an S256 code_challenge with uses_pkce and none without it', async () => {
    const withPkce = await stack.api('/v2/auth/authenticate', {
      method: 'POST',
      apiKey,
      body: { provider: 'idp-none', scopes: ['repo'] },
    });
    const url = new URL(withPkce.body.url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(`${stack.baseUrl}/v2/auth/callback/idp-none`);
    const withoutPkce = await stack.api('/v2/auth/authenticate', {
      method: 'POST',
      apiKey,
      body: { provider: 'idp-post', scopes: [] },
    });
    expect(new URL(withoutPkce.body.url).searchParams.has('code_challenge')).toBe(false);
  });

  it.each([
    ['a wrong', (box: AuthStack['secretBox']) => box.encrypt('x'.repeat(43))],
    ['a missing', () => null],
  ])(
    'lets the authorization server refuse %s PKCE verifier: 400, attempt failed, nothing stored',
    async (_label, verifierFor) => {
      // A confidential client with uses_pkce (the server does not demand PKCE of it, so only the challenge binds it).
      const pkceTenant = await stack.tenant('pkce');
      expect(
        (await stack.createProvider(pkceTenant.apiKey, 'idp-basic', 'client_secret_basic', { uses_pkce: true })).status,
      ).toBe(200);
      const { authId, callback } = await stack.authorize(pkceTenant.apiKey, 'idp-basic');
      await stack
        .db('oauth_attempts')
        .where({ id: authId })
        .update({ pkce_verifier_encrypted: verifierFor(stack.secretBox) });

      const refused = await stack.api(pathOf(callback));
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^The token endpoint refused the request: invalid_grant/);
      expect(await tokensOf(authId)).toHaveLength(0);
      const waited = await stack.api(`/v2/auth/wait/${authId}?timeout=0`, { apiKey: pkceTenant.apiKey });
      expect(waited.body).toMatchObject({ status: 'not_found', message: expect.stringContaining('invalid_grant') });
    },
  );

  it('completes with the verifier it kept when uses_pkce is on for a confidential client', async () => {
    const pkceTenant = await stack.tenant('pkce-ok');
    await stack.createProvider(pkceTenant.apiKey, 'idp-post', 'client_secret_post', { uses_pkce: true });
    const { authId, callback } = await stack.authorize(pkceTenant.apiKey, 'idp-post');
    expect((await stack.db('oauth_attempts').where({ id: authId }).first()).pkce_verifier_encrypted).toMatch(/^v1:/);
    expect((await stack.api(pathOf(callback))).status).toBe(200);
  });

  it('answers 400 to a reused state and keeps the first outcome', async () => {
    const { authId, callback } = await stack.authorize(apiKey, 'idp-post');
    expect((await stack.api(pathOf(callback))).status).toBe(200);
    const again = await stack.api(pathOf(callback));
    expect(again.status).toBe(400);
    expect(again.body.detail).toBe('The state was already used; start the authorization again.');
    expect(await tokensOf(authId)).toHaveLength(1);
  });

  it('answers 400 to a tampered state and stores nothing', async () => {
    const { authId, callback } = await stack.authorize(apiKey, 'idp-post');
    const state = callback.searchParams.get('state') as string;
    const [body, signature] = state.split('.') as [string, string];
    const forged = JSON.parse(Buffer.from(body, 'base64url').toString());
    forged.e += 3_600_000;
    callback.searchParams.set('state', `${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${signature}`);
    const answer = await stack.api(pathOf(callback));
    expect(answer).toMatchObject({ status: 400, body: { detail: 'Invalid state parameter.' } });
    expect(await tokensOf(authId)).toHaveLength(0);
    expect((await stack.db('oauth_attempts').where({ id: authId }).first()).used_at).toBeNull();
  });

  it('answers 400 to an expired state and stores nothing', async () => {
    const { authId, callback } = await stack.authorize(apiKey, 'idp-post');
    await stack
      .db('oauth_attempts')
      .where({ id: authId })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const answer = await stack.api(pathOf(callback));
    expect(answer).toMatchObject({ status: 400, body: { detail: 'The authorization attempt has expired; start it again.' } });
    expect(await tokensOf(authId)).toHaveLength(0);
    expect((await stack.api(`/v2/auth/wait/${authId}?timeout=0`, { apiKey })).body.status).toBe('not_found');
  });

  it('answers 400 to a state brought to another provider and stores nothing', async () => {
    const { authId, callback } = await stack.authorize(apiKey, 'idp-post');
    const elsewhere = new URL(callback.toString().replace('/callback/idp-post', '/callback/idp-basic'));
    const answer = await stack.api(pathOf(elsewhere));
    expect(answer).toMatchObject({ status: 400, body: { detail: 'The state does not belong to provider idp-basic.' } });
    expect(await tokensOf(authId)).toHaveLength(0);
    // The state was not spent by the wrong provider: the right callback still works.
    expect((await stack.api(pathOf(callback))).status).toBe(200);
  });

  it('fails the attempt when the provider redirects back with error, storing nothing', async () => {
    const started = await stack.api('/v2/auth/authenticate', {
      method: 'POST',
      apiKey,
      body: { provider: 'idp-post', scopes: ['repo'] },
    });
    const state = new URL(started.body.url).searchParams.get('state') as string;
    const answer = await stack.api(
      `/v2/auth/callback/idp-post?error=access_denied&error_description=${encodeURIComponent('User said no')}&state=${encodeURIComponent(state)}`,
    );
    expect(answer).toMatchObject({
      status: 400,
      body: { detail: 'Authorization failed at the provider: access_denied (User said no).' },
    });
    expect(await tokensOf(started.body.auth_id)).toHaveLength(0);
    const waited = await stack.api(`/v2/auth/wait/${started.body.auth_id}?timeout=0`, { apiKey });
    expect(waited.body).toMatchObject({ status: 'not_found', message: expect.stringContaining('access_denied') });
  });

  it('reports timeout when nothing happens within the wait, and not_found for another tenant', async () => {
    const started = await stack.api('/v2/auth/authenticate', {
      method: 'POST',
      apiKey,
      body: { provider: 'idp-post', scopes: ['repo'] },
    });
    const begun = Date.now();
    const waited = await stack.api(`/v2/auth/wait/${started.body.auth_id}?timeout=1`, { apiKey });
    expect(waited.body.status).toBe('timeout');
    expect(Date.now() - begun).toBeGreaterThanOrEqual(900);
    const other = await stack.tenant('flow-other');
    const foreign = await stack.api(`/v2/auth/wait/${started.body.auth_id}?timeout=0`, { apiKey: other.apiKey });
    expect(foreign.body.status).toBe('not_found');
  });

  it('requires code and state on the callback, and an API key on authenticate and wait', async () => {
    expect((await stack.api('/v2/auth/callback/idp-post?code=abc')).status).toBe(400);
    expect(
      (await stack.api('/v2/auth/authenticate', { method: 'POST', body: { provider: 'idp-post', scopes: [] } })).status,
    ).toBe(401);
    expect((await stack.api(`/v2/auth/wait/${crypto.randomUUID()}`)).status).toBe(401);
    const unknown = await stack.api('/v2/auth/authenticate', { method: 'POST', apiKey, body: { provider: 'nope', scopes: [] } });
    expect(unknown).toMatchObject({ status: 404, body: { detail: 'Provider nope not found.' } });
  });
});
