/**
 * Reads of revisions cost one row each and no Temporal call, and the long-poll form of GET revision answers as soon
 * as the row's status changes. The status writes here are made directly on the row, standing in for the pipeline's
 * own writes (no workflow runs in this test: the API alone, without the outbox relay).
 */
import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import request from 'supertest';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

describe('revision reads', () => {
  let db: Db;
  let temporal: Client;
  let app: Koa;
  let key: string;
  let temporalCalls = 0;
  const call = () => request(app.callback());

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    // Counts every use of the workflow client, so a test can tell that a read never reached Temporal.
    const counting = new Proxy(temporal, {
      get: (target, property, receiver) => {
        if (property === 'workflow') temporalCalls += 1;
        return Reflect.get(target, property, receiver);
      },
    });
    app = createApp({ config, db, secretBox: testSecretBox(config), temporal: counting });
    key = (await createTenant(db, 'reads')).apiKey;
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  async function createDeployment(): Promise<{ id: string; revisionId: string }> {
    const response = await call()
      .post('/v2/deployments')
      .set('X-Api-Key', key)
      .send({
        name: `reads-${crypto.randomBytes(4).toString('hex')}`,
        source: 'codehost',
        source_config: { repo_url: 'https://example.com/acme/agent.git' },
        source_revision_config: {},
        secrets: [],
      });
    expect(response.status).toBe(201);
    return { id: response.body.id, revisionId: response.body.latest_revision_id };
  }
  const setStatus = (revisionId: string, status: string) => db('revisions').where({ id: revisionId }).update({ status });

  it('serves GET revision and the revision list of in-progress and failed revisions without any Temporal call', async () => {
    const { id, revisionId } = await createDeployment();
    await setStatus(revisionId, 'BUILD_FAILED');
    temporalCalls = 0;
    const single = await call().get(`/v2/deployments/${id}/revisions/${revisionId}`).set('X-Api-Key', key);
    await setStatus(revisionId, 'BUILDING');
    const list = await call().get(`/v2/deployments/${id}/revisions`).set('X-Api-Key', key);
    expect(single.body.status).toBe('BUILD_FAILED');
    expect(list.body.resources.map((revision: { status: string }) => revision.status)).toEqual(['BUILDING']);
    expect(temporalCalls).toBe(0);
  });

  it('holds a wait_for_change_from request until the status changes, then answers with the new status within a second', async () => {
    const { id, revisionId } = await createDeployment();
    const started = Date.now();
    const pending = call()
      .get(`/v2/deployments/${id}/revisions/${revisionId}?wait_for_change_from=CREATING&timeout=20`)
      .set('X-Api-Key', key);
    const answered = pending.then((response) => ({ response, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 400));
    const changedAt = Date.now();
    await setStatus(revisionId, 'QUEUED');
    const { response, at } = await answered;
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('QUEUED');
    expect(changedAt - started).toBeGreaterThanOrEqual(400);
    expect(at - changedAt).toBeLessThan(1000);
  });

  it('answers a wait_for_change_from request at once when the status already differs, and unchanged after its timeout', async () => {
    const { id, revisionId } = await createDeployment();
    const path = `/v2/deployments/${id}/revisions/${revisionId}`;
    const differs = await call().get(`${path}?wait_for_change_from=BUILDING&timeout=30`).set('X-Api-Key', key);
    expect(differs.body.status).toBe('CREATING');
    const started = Date.now();
    const unchanged = await call().get(`${path}?wait_for_change_from=CREATING&timeout=1`).set('X-Api-Key', key);
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.status).toBe('CREATING');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('rejects a wait_for_change_from outside the revision statuses and a timeout above 60 with 422', async () => {
    const { id, revisionId } = await createDeployment();
    const path = `/v2/deployments/${id}/revisions/${revisionId}`;
    const badStatus = await call().get(`${path}?wait_for_change_from=NOPE`).set('X-Api-Key', key);
    expect(badStatus.status).toBe(422);
    expect(badStatus.body.detail[0].loc).toEqual(['query', 'wait_for_change_from']);
    const badTimeout = await call().get(`${path}?wait_for_change_from=CREATING&timeout=61`).set('X-Api-Key', key);
    expect(badTimeout.status).toBe(422);
  });
});
