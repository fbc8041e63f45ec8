/** Which request headers a run's graph sees, with and without graphx.json `http.configurable_headers`. */
import type Koa from 'koa';
import type { RunRequest } from '../../src/execution/runService';
import { headerRuleOf, withRequestHeaders } from '../../src/http/requestHeaders';

function seen(headers: Record<string, string>, rule = headerRuleOf(null)): Record<string, unknown> {
  const ctx = { headers, state: { headerRule: rule } } as unknown as Koa.Context;
  const body: Pick<RunRequest, 'config'> = { config: {} };
  return (withRequestHeaders(body, ctx).config?.configurable as Record<string, unknown> | undefined) ?? {};
}

const request = {
  'x-user-id': 'u1',
  'user-agent': 'sdk',
  'accept-language': 'fr',
  'x-api-key': 'secret',
  authorization: 'Bearer secret',
  'x-graphx-loopback': 'token',
};

test('by default every x-* header and user-agent are copied, credentials never', () => {
  expect(seen(request)).toEqual({ 'x-user-id': 'u1', 'user-agent': 'sdk' });
});

test('includes name the only headers copied, any header, with * as the one wildcard', () => {
  const rule = headerRuleOf({ includes: ['accept-*', 'x-user.id'], excludes: [] });
  expect(seen(request, rule)).toEqual({ 'accept-language': 'fr' });
});

test('excludes win over includes and over the default, and credentials stay out even when included', () => {
  expect(seen(request, headerRuleOf({ includes: [], excludes: ['x-user-*'] }))).toEqual({ 'user-agent': 'sdk' });
  expect(seen(request, headerRuleOf({ includes: ['*'], excludes: ['user-agent'] }))).toEqual({
    'x-user-id': 'u1',
    'accept-language': 'fr',
  });
});
