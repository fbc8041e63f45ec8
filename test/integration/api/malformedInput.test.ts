/**
 * The classes of malformed input a fuzzer turned into 500s or plain-text errors, one example each: NUL characters,
 * deep nesting, out-of-range numbers, empty and non-object bodies, unknown methods. Real PostgreSQL, HTTP over loopback.
 */
import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import request from 'supertest';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';
import { deepJson } from '../../support/fuzz';
import { seedDeployment } from '../../../packages/runtime/test/integration/support/runtimeHarness';

const validBody = (extra: Record<string, unknown> = {}) => ({
  name: `nul-${crypto.randomBytes(4).toString('hex')}`,
  source: 'codehost',
  source_config: { repo_url: 'https://example.com/acme/agent.git' },
  source_revision_config: {},
  ...extra,
});

describe('malformed input gets a 4xx in the documented shape', () => {
  let db: Db;
  let temporal: Client;
  let app: Koa;
  let apiKey: string;
  let tenantId: string;
  const call = () => request(app.callback());

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    app = createApp({ config, db, secretBox: testSecretBox(config), temporal });
    ({ apiKey, tenantId } = await createTenant(db, 'malformed'));
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  const post = (path: string, body: string, headers: Record<string, string> = { 'X-Api-Key': apiKey }) =>
    call().post(path).set(headers).set('Content-Type', 'application/json').send(body);

  it.each([
    ['a blank body', ' ', ['body'], 'missing'],
    ['a JSON string', '" "', ['body'], 'dict_type'],
    ['null', 'null', ['body'], 'dict_type'],
    ['an array', '[]', ['body'], 'dict_type'],
  ])('a create with %s is a 422 naming the body', async (_label, body, loc, type) => {
    const response = await post('/v2/deployments', body);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc, type });
  });

  it('a NUL character anywhere in a body is a 422 naming where it is, before anything reaches PostgreSQL', async () => {
    const response = await post(
      '/v2/deployments',
      JSON.stringify(validBody({ source_config: { repo_url: 'https://example.com/a.git', build_command: 'make\u0000' } })),
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      { loc: ['body', 'source_config', 'build_command'], msg: 'String must not contain a NUL character', type: 'string_nul' },
    ]);
    const provider = await post('/v2/auth/providers', JSON.stringify({ provider_id: 'p', name: 'a\u0000b' }));
    expect(provider.status).toBe(422);
    expect(provider.body.detail[0].type).toBe('string_nul');
  });

  it('a NUL character in a query parameter is a 422, not a database error', async () => {
    const response = await call().get('/v2/deployments?name_contains=%00').set('X-Api-Key', apiKey);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['query', 'name_contains'], type: 'string_nul' });
  });

  it('nesting deeper than 64 levels is a 422, however deep it goes', async () => {
    const body = `{"name":"deep","source":"codehost","source_config":{"resource_spec":{"volumes":[{"name":"v","x":${deepJson(
      20_000,
    )}}]}},"source_revision_config":{}}`;
    const response = await post('/v2/deployments', body);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ type: 'too_deep' });
    expect(response.body.detail[0].loc.slice(0, 6)).toEqual(['body', 'source_config', 'resource_spec', 'volumes', 0, 'x']);
  });

  it('a run record spanning 1970 to 2100 is recorded with its whole latency; times PostgreSQL cannot hold are a 422', async () => {
    const { serviceToken, projectId } = await seedDeployment(db, tenantId);
    const runId = crypto.randomUUID();
    const record = (start: string, end: string) =>
      JSON.stringify({ runs: [{ run_id: runId, status: 'success', start_time: start, end_time: end }] });
    const auth = { Authorization: `Bearer ${serviceToken}` };
    const long = await post('/internal/v1/runs', record('1970-01-01T00:00:00Z', '2100-01-01T00:00:00Z'), auth);
    expect(long.status).toBe(202);
    const runs = await call().get(`/v1/projects/${projectId}/runs`).set('X-Api-Key', apiKey);
    expect(runs.body.resources[0].latency_ms).toBe(Date.parse('2100-01-01T00:00:00Z'));
    const ancient = await post('/internal/v1/runs', record('-271821-04-20T00:00:00Z', '2000-01-01T00:00:00Z'), auth);
    expect(ancient.status).toBe(422);
    expect(ancient.body.detail[0].loc).toEqual(['body', 'runs', 0, 'start_time']);
  });

  it.each([
    ['PUT', 405],
    ['PROPFIND', 405],
    ['TRACE', 405],
  ])('%s on a known path answers %i as {"detail"} JSON', async (method, status) => {
    const response = await call()
      [method.toLowerCase() as 'put' | 'propfind' | 'trace']('/v2/deployments')
      .set('X-Api-Key', apiKey);
    expect(response.status).toBe(status);
    expect(response.type).toBe('application/json');
    expect(response.body).toEqual({ detail: expect.any(String) });
    if (status === 405) expect(response.headers.allow).toContain('POST');
  });

  it('a wrong method with a broken body is a 405, not a complaint about the body', async () => {
    const response = await call()
      .put('/v2/deployments')
      .set('X-Api-Key', apiKey)
      .set('Content-Type', 'application/json')
      .send('{');
    expect(response.status).toBe(405);
  });
});
