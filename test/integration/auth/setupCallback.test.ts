import { getIntegrationCloneToken } from '../../../src/auth/integrationCredentials';
import { NotFoundError } from '@graphx/kit/errors';
import { pathOf, startAuthStack, type AuthStack } from './authStack';

describe('the code-hosting app setup URL and code-host integrations', () => {
  let stack: AuthStack;
  let apiKey: string;
  let tenantId: string;

  beforeAll(async () => {
    stack = await startAuthStack();
    ({ apiKey, tenantId } = await stack.tenant('setup'));
    expect((await stack.createProvider(apiKey, 'codehost', 'client_secret_basic')).status).toBe(200);
  });
  afterAll(async () => {
    await stack.stop();
  });

  const storedCounts = async () => ({
    tokens: Number((await stack.db('oauth_tokens').where({ tenant_id: tenantId }).count('* as n'))[0]?.n),
    integrations: Number((await stack.db('codehost_integrations').where({ tenant_id: tenantId }).count('* as n'))[0]?.n),
  });

  /** What the code host does after an installation that asked for user authorization: the setup URL with a code. */
  async function installThroughSetupUrl(installationId: number): Promise<{ authId: string; setupPath: string }> {
    const { authId, callback } = await stack.authorize(apiKey, 'codehost');
    const setup = new URL(callback.toString().replace('/v2/auth/callback/', '/v2/auth/setup/'));
    setup.searchParams.set('setup_action', 'install');
    setup.searchParams.set('installation_id', String(installationId));
    return { authId, setupPath: pathOf(setup) };
  }

  it('answers an update with a success page, without an API key and without any exchange', async () => {
    const before = await storedCounts();
    const answer = await stack.api('/v2/auth/setup/codehost?setup_action=update&installation_id=77');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'updated' });
    expect(await storedCounts()).toEqual(before);
  });

  it('answers a request with a waiting-for-owner-approval page and stores nothing', async () => {
    const before = await storedCounts();
    const answer = await stack.api('/v2/auth/setup/codehost?setup_action=request');
    expect(answer).toMatchObject({
      status: 200,
      body: { status: 'pending_approval', message: expect.stringContaining('approve') },
    });
    expect(await storedCounts()).toEqual(before);
  });

  it('answers a provider error with 400 and its description, storing nothing', async () => {
    const before = await storedCounts();
    const answer = await stack.api('/v2/auth/setup/codehost?error=access_denied&error_description=Denied%20by%20user');
    expect(answer).toMatchObject({
      status: 400,
      body: { detail: 'Authorization failed at the provider: access_denied (Denied by user).' },
    });
    expect(await storedCounts()).toEqual(before);
  });

  it('acknowledges an install without code but does not trust its installation_id', async () => {
    const before = await storedCounts();
    const answer = await stack.api('/v2/auth/setup/codehost?setup_action=install&installation_id=31337');
    expect(answer).toMatchObject({ status: 200, body: { status: 'installed' } });
    expect(await storedCounts()).toEqual(before);
    expect((await stack.api('/v1/integrations/codehost/install', { apiKey })).body.resources).toEqual([]);
  });

  it('exchanges the code of an install with code and state, and records the installation as an integration', async () => {
    const { authId, setupPath } = await installThroughSetupUrl(4242);
    const answer = await stack.api(setupPath);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 'completed',
      auth_id: authId,
      provider_id: 'codehost',
      integration_id: expect.any(String),
    });

    const listed = await stack.api('/v1/integrations/codehost/install', { apiKey });
    expect(listed.body).toEqual({
      resources: [
        {
          id: answer.body.integration_id,
          provider_id: 'codehost',
          installation_id: 4242,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
      offset: 1,
    });
    const token = await getIntegrationCloneToken(stack, tenantId, answer.body.integration_id);
    expect(await stack.oauth.isActiveToken(token)).toBe(true);
    expect(listed.text).not.toContain(token);
  });

  it('keeps one integration per installation when it is installed again, with the new token', async () => {
    const first = await stack.api((await installThroughSetupUrl(5151)).setupPath);
    const firstToken = await getIntegrationCloneToken(stack, tenantId, first.body.integration_id);
    const second = await stack.api((await installThroughSetupUrl(5151)).setupPath);
    expect(second.body.integration_id).toBe(first.body.integration_id);
    expect(await getIntegrationCloneToken(stack, tenantId, second.body.integration_id)).not.toBe(firstToken);
  });

  it('records nothing when the exchange of an install fails', async () => {
    const { setupPath } = await installThroughSetupUrl(6060);
    const tampered = setupPath.replace(/code=[^&]+/, 'code=not-a-real-code');
    const before = await storedCounts();
    const answer = await stack.api(tampered);
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/^The token endpoint refused the request: invalid_grant/);
    expect(await storedCounts()).toEqual(before);
  });

  it('answers 422 to a non-integer installation_id and an unknown setup_action, and 400 to code without state', async () => {
    const notInteger = await stack.api('/v2/auth/setup/codehost?setup_action=install&installation_id=12abc');
    expect(notInteger.status).toBe(422);
    expect(notInteger.body.detail).toEqual([{ loc: ['query', 'installation_id'], msg: expect.any(String), type: 'int_parsing' }]);
    const unknownAction = await stack.api('/v2/auth/setup/codehost?setup_action=delete');
    expect(unknownAction.body.detail[0]).toMatchObject({ loc: ['query', 'setup_action'], type: 'enum' });
    const codeOnly = await stack.api('/v2/auth/setup/codehost?setup_action=install&code=abc&installation_id=1');
    expect(codeOnly).toMatchObject({
      status: 400,
      body: { detail: 'Both code and state are required to finish the authorization.' },
    });
  });

  it("hides one tenant's integrations from another: not listed, and no clone token (NotFoundError)", async () => {
    const [integration] = (await stack.api('/v1/integrations/codehost/install', { apiKey })).body.resources;
    const other = await stack.tenant('setup-other');
    expect((await stack.api('/v1/integrations/codehost/install', { apiKey: other.apiKey })).body.resources).toEqual([]);
    await expect(getIntegrationCloneToken(stack, other.tenantId, integration.id)).rejects.toThrow(NotFoundError);
    await expect(getIntegrationCloneToken(stack, tenantId, crypto.randomUUID())).rejects.toThrow(NotFoundError);
    await expect(getIntegrationCloneToken(stack, tenantId, 'not-a-uuid')).rejects.toThrow(NotFoundError);
  });
});
