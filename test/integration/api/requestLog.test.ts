/**
 * Issue 12's request log: one JSON line per request through the process logger's settings, naming the route pattern
 * (not the ids), status, duration, request id and tenant, and never the API key.
 */
import { Writable } from 'node:stream';
import type { Client } from '@temporalio/client';
import request from 'supertest';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { createLogger } from '@graphx/kit/logger';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

describe('the API request log', () => {
  let db: Db;
  let temporal: Client;
  const output: string[] = [];
  let callback: ReturnType<ReturnType<typeof createApp>['callback']>;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        output.push(String(chunk));
        done();
      },
    });
    const log = createLogger(sink, 'info');
    callback = createApp({ config, db, secretBox: testSecretBox(config), temporal, log }).callback();
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  /** The request lines written so far, parsed (every line must be JSON). */
  function requestLines(): Array<Record<string, any>> {
    return output
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((line) => line.msg === 'request');
  }

  it('writes one JSON line per request with method, route pattern, status, duration, request id and tenant, never the key', async () => {
    const { apiKey, tenantId } = await createTenant(db, 'log');
    const missing = '00000000-0000-4000-8000-000000000000';
    output.length = 0;
    const response = await request(callback)
      .get(`/v2/deployments/${missing}`)
      .set('X-Api-Key', apiKey)
      .set('X-Request-Id', 'req-log-1');
    expect(response.status).toBe(404);
    await new Promise((resolve) => setImmediate(resolve));

    const lines = requestLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      service: 'graphx',
      request: {
        method: 'GET',
        route: '/v2/deployments/:deployment_id',
        path: `/v2/deployments/${missing}`,
        status: 404,
        requestId: 'req-log-1',
        tenantId,
      },
    });
    expect(typeof lines[0]?.request.durationMs).toBe('number');
    expect(output.join('')).not.toContain(apiKey);
    // JSON lines only: no terminal colour codes whatever the output is.
    expect(output.join('')).not.toMatch(/\u001b\[/);
  });

  it('logs a refused request with its status and no tenant, and without the key it was sent', async () => {
    output.length = 0;
    const wrongKey = 'gx_wrong-key-that-must-not-be-logged';
    const response = await request(callback).get('/v2/deployments').set('X-Api-Key', wrongKey);
    expect(response.status).toBe(401);
    await new Promise((resolve) => setImmediate(resolve));

    const lines = requestLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]?.request).toMatchObject({ method: 'GET', route: '/v2/deployments', status: 401 });
    expect(lines[0]?.request.tenantId).toBeUndefined();
    expect(lines[0]?.request.requestId).toBe(response.headers['x-request-id']);
    expect(output.join('')).not.toContain(wrongKey);
  });
});
