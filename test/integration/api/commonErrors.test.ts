import request from 'supertest';
import type Koa from 'koa';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';
import type { Client } from '@temporalio/client';

describe('control-plane API common rules', () => {
  let db: Db;
  let temporal: Client;
  let app: Koa;
  let apiKey: string;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    app = createApp({ config, db, secretBox: testSecretBox(config), temporal });
    apiKey = (await createTenant(db)).apiKey;
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  it('answers GET /ok without a key', async () => {
    const response = await request(app.callback()).get('/ok');
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toMatch(/.+/);
  });

  it('rejects a /v2 request without X-Api-Key with 401 and a detail', async () => {
    const response = await request(app.callback()).get('/v2/deployments');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'Missing X-Api-Key header.' });
  });

  it('rejects an unknown API key with 401', async () => {
    const response = await request(app.callback()).get('/v2/deployments').set('X-Api-Key', 'gx_not-a-real-key');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'Invalid API key.' });
  });

  it('keeps a sane incoming X-Request-Id and echoes it', async () => {
    const response = await request(app.callback()).get('/ok').set('X-Request-Id', 'ci-run-42');
    expect(response.headers['x-request-id']).toBe('ci-run-42');
  });

  it('serves an OpenAPI 3.1 description at /openapi.json with version 0.1.0 and a docs page', async () => {
    const spec = await request(app.callback()).get('/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
    expect(spec.body.info.version).toBe('0.1.0');
    const docs = await request(app.callback()).get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('/openapi.json');
  });

  it('answers an unknown path with 404 and a detail', async () => {
    const response = await request(app.callback()).get('/nowhere').set('X-Api-Key', apiKey);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Not Found' });
  });
});

describe('control-plane API while its database is unavailable', () => {
  it('answers 503 with Retry-After and a detail (not 500) while PostgreSQL refuses connections', async () => {
    const { findFreePort } = await import('@graphx/kit/net/ports');
    const { createDb } = await import('../../../src/db/knex');
    // A port nothing listens on: what the API meets while an embedded PostgreSQL restarts after a crash.
    const down = createDb(`postgres://postgres@127.0.0.1:${await findFreePort()}/graphx`);
    const temporal = await testTemporalClient();
    try {
      const config = testConfig();
      const app = createApp({ config, db: down, secretBox: testSecretBox(config), temporal });
      const response = await request(app.callback()).get('/v2/deployments').set('X-Api-Key', 'gx_any-key');
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(response.body).toEqual({ detail: 'The database is unavailable (restarting or unreachable); retry shortly.' });
    } finally {
      await temporal.connection.close();
      await down.destroy();
    }
  });
});
