/**
 * Outside the embedded stack (insecure OAuth off) a tenant cannot aim the token exchange at our own network: a token
 * URL whose host resolves to loopback is refused before any connection is made. A plain loopback TCP listener stands
 * where the tenant pointed, counting connection attempts.
 */
import net from 'node:net';
import { postForm } from '@graphx/kit/net/formPost';
import { guardedLookup, isRefusedAddress, RefusedDestinationError } from '@graphx/kit/net/outboundPolicy';
import { startAuthStack, type AuthStack } from './authStack';

describe('token endpoints on non-public addresses', () => {
  let stack: AuthStack;
  let apiKey: string;
  let tenantId: string;
  let target: net.Server;
  let connections = 0;
  let port: number;

  beforeAll(async () => {
    stack = await startAuthStack({ env: { GRAPHX_ALLOW_INSECURE_OAUTH: '0' } });
    ({ apiKey, tenantId } = await stack.tenant('outbound'));
    target = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    port = (target.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => target.close(() => resolve()));
    await stack.stop();
  });

  it.each([
    ['localhost', 'https://localhost:PORT/token'],
    ['a literal loopback address', 'https://127.0.0.1:PORT/token'],
  ])(
    'refuses the code exchange when the token URL names %s, with no connection made and nothing stored',
    async (_label, template) => {
      const providerId = `internal-${connections}-${Math.random().toString(36).slice(2, 8)}`;
      const created = await stack.api('/v2/auth/providers', {
        method: 'POST',
        apiKey,
        body: {
          provider_id: providerId,
          name: 'Internal',
          client_id: 'client',
          client_secret: 'secret',
          auth_url: `https://localhost:${port}/authorize`,
          token_url: template.replace('PORT', String(port)),
        },
      });
      expect(created.status).toBe(200);
      const started = await stack.api('/v2/auth/authenticate', {
        method: 'POST',
        apiKey,
        body: { provider: providerId, scopes: [] },
      });
      expect(started.status).toBe(200);
      const state = new URL(started.body.url).searchParams.get('state') as string;

      const answer = await stack.api(`/v2/auth/callback/${providerId}?code=abc&state=${encodeURIComponent(state)}`);
      expect(answer.status).toBe(400);
      expect(answer.body.detail).toMatch(
        /^The token endpoint's host resolves to (127\.0\.0\.1|::1), an address the control plane does not send requests to\.$/,
      );
      expect(connections).toBe(0);
      expect(await stack.db('oauth_tokens').where({ tenant_id: tenantId })).toHaveLength(0);
    },
  );

  it('refuses at connect time too: a name is judged on the addresses the socket would use (no DNS rebinding gap)', async () => {
    const before = connections;
    const post = postForm(`http://localhost:${port}/token`, {
      headers: {},
      body: 'a=b',
      timeoutMs: 5_000,
      maxChars: 100,
      lookup: guardedLookup(true),
    });
    await expect(post).rejects.toBeInstanceOf(RefusedDestinationError);
    expect(connections).toBe(before);
  });
});

describe('isRefusedAddress', () => {
  it('always refuses loopback, link-local (cloud metadata), unspecified and mapped loopback; private ranges only unless allowed', () => {
    for (const address of ['127.0.0.1', '::1', '169.254.169.254', '0.0.0.0', '::ffff:127.0.0.1', 'fe80::1']) {
      expect([address, isRefusedAddress(address, true)]).toEqual([address, true]);
    }
    for (const address of ['10.1.2.3', '172.16.0.9', '192.168.1.1', 'fd00::5', '::ffff:10.0.0.1']) {
      expect([address, isRefusedAddress(address, false), isRefusedAddress(address, true)]).toEqual([address, true, false]);
    }
    for (const address of ['140.82.112.3', '2606:4700::1111']) {
      expect([address, isRefusedAddress(address, false)]).toEqual([address, false]);
    }
  });
});
