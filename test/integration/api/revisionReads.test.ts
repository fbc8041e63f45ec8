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
import { DeploymentRepository, toDeployment } from '../../../src/db/repositories/deployments';
import { pageVersions, RevisionRepository, toRevision } from '../../../src/db/repositories/revisions';
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
    // Held until the change (not answered during the 400 ms before it), then answered within a second of it.
    expect(at).toBeGreaterThanOrEqual(changedAt);
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

  it('a polled revision list shows every change of a row at once, also from a writer that leaves updated_at alone', async () => {
    const { id, revisionId } = await createDeployment();
    const list = async () => {
      const response = await call().get(`/v2/deployments/${id}/revisions`).set('X-Api-Key', key);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.text));
      return response.body.resources.map((revision: { status: string; status_message: string | null }) => [
        revision.status,
        revision.status_message,
      ]);
    };
    expect(await list()).toEqual([['CREATING', null]]);
    expect(await list()).toEqual([['CREATING', null]]);
    await setStatus(revisionId, 'BUILDING');
    expect(await list()).toEqual([['BUILDING', null]]);
    // Two changes in one transaction, then a message only: each is seen, none is served from an older view.
    await db.transaction(async (trx) => {
      await trx('revisions').where({ id: revisionId }).update({ status: 'BUILD_FAILED' });
      await trx('revisions').where({ id: revisionId }).update({ status_message: 'npm ci failed' });
    });
    expect(await list()).toEqual([['BUILD_FAILED', 'npm ci failed']]);
    expect(await list()).toEqual([['BUILD_FAILED', 'npm ci failed']]);
    await db('revisions').where({ id: revisionId }).update({ status_message: 'npm ci failed: exit 1' });
    expect(await list()).toEqual([['BUILD_FAILED', 'npm ci failed: exit 1']]);
    expect(await list()).toEqual([['BUILD_FAILED', 'npm ci failed: exit 1']]);
    // A new revision, and then an older row changed under a page served whole before: each is seen at once.
    const first = await db('revisions').where({ id: revisionId }).first();
    await db('revisions').insert({ ...first, id: crypto.randomUUID(), number: 2, status: 'QUEUED', status_message: null });
    expect(await list()).toEqual([
      ['QUEUED', null],
      ['BUILD_FAILED', 'npm ci failed: exit 1'],
    ]);
    expect(await list()).toEqual([
      ['QUEUED', null],
      ['BUILD_FAILED', 'npm ci failed: exit 1'],
    ]);
    await db('revisions').where({ id: revisionId }).update({ status_message: 'retried' });
    expect(await list()).toEqual([
      ['QUEUED', null],
      ['BUILD_FAILED', 'retried'],
    ]);
    await db('revisions').where({ number: 2, deployment_id: id }).delete();
    expect(await list()).toEqual([['BUILD_FAILED', 'retried']]);
  });

  it('pages the revision list newest first, filters it by a status list, and hides it from another tenant', async () => {
    const { id, revisionId } = await createDeployment();
    const first = await db('revisions').where({ id: revisionId }).first();
    const statuses = ['BUILD_FAILED', 'DEPLOYED', 'BUILDING', 'DEPLOY_FAILED'];
    await db('revisions').insert(
      statuses.map((status, i) => ({ ...first, id: crypto.randomUUID(), number: i + 2, status, status_message: null })),
    );
    const page = async (query: string, apiKey = key) => {
      const response = await call().get(`/v2/deployments/${id}/revisions?${query}`).set('X-Api-Key', apiKey);
      return { status: response.status, numbers: response.body.resources?.map((r: { number: number }) => r.number) };
    };
    expect(await page('limit=2')).toEqual({ status: 200, numbers: [5, 4] });
    expect(await page('limit=2&offset=2')).toEqual({ status: 200, numbers: [3, 2] });
    // A poller repeats the same query: the same page each time.
    expect(await page('status=BUILD_FAILED,DEPLOY_FAILED')).toEqual({ status: 200, numbers: [5, 2] });
    expect(await page('status=BUILD_FAILED,DEPLOY_FAILED')).toEqual({ status: 200, numbers: [5, 2] });
    const stranger = (await createTenant(db, 'reads-other')).apiKey;
    expect((await page('limit=2', stranger)).status).toBe(404);
    const single = await call().get(`/v2/deployments/${id}/revisions/${revisionId}`).set('X-Api-Key', stranger);
    expect(single.status).toBe(404);
  });

  it('refuses a malformed revision id with 422 on every repeat, not only the first', async () => {
    const { id } = await createDeployment();
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await call().get(`/v2/deployments/${id}/revisions/not-a-uuid`).set('X-Api-Key', key);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['path', 'revision_id']);
    }
  });

  it('reads through the prepared statements every field a full row gives (a column added later is not dropped), and for a deployment the latest revision fields its view shows', async () => {
    const { id, revisionId } = await createDeployment();
    // Every nullable column filled, so a column missing from a statement would read back as null.
    await db('revisions').where({ id: revisionId }).update({
      status_message: 'm',
      failed_step: 'build',
      repo_commit_sha: 'abc',
      image_ref: 'registry.example/app:1',
      image_digest: 'sha256:00',
      redeployed_from_revision_id: revisionId,
    });
    const tenantId = (await db('deployments').where({ id }).first('tenant_id')).tenant_id as string;
    const fullRevision = toRevision(await db('revisions').where({ id: revisionId }).first());
    const fullDeployment = toDeployment(await db('deployments').where({ id }).first());
    expect(Object.values(fullRevision).filter((value) => value === null)).toEqual([]);
    expect(await new RevisionRepository(db).findOfTenant(tenantId, id, revisionId)).toEqual(fullRevision);
    const page = await new RevisionRepository(db).pageOfTenant(tenantId, id, { limit: 1, offset: 0 });
    const [version] = pageVersions(page);
    const [listed] = await new RevisionRepository(db).findWithVersions([version!.id]);
    expect(listed).toEqual({ revision: fullRevision, version: version!.version });
    // GET deployment reads only what its view shows of the latest revision (the type says which fields).
    const { sourceRevisionConfig, secretsEncrypted, repoCommitSha, imageRef, imageDigest } = fullRevision;
    const viewVersion = await new DeploymentRepository(db).viewVersion(tenantId, id);
    expect(await new DeploymentRepository(db).findWithLatestRevision(tenantId, id)).toEqual({
      deployment: fullDeployment,
      latest: { id: revisionId, sourceRevisionConfig, secretsEncrypted, repoCommitSha, imageRef, imageDigest },
      version: viewVersion,
    });
  });

  it('a polled GET deployment and GET revision show every change of their rows at once, and READY turns UNUSED by time alone', async () => {
    const { id, revisionId } = await createDeployment();
    const get = async (path: string) => {
      const response = await call().get(path).set('X-Api-Key', key);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      return response.body as Record<string, any>;
    };
    const revision = () => get(`/v2/deployments/${id}/revisions/${revisionId}`);
    const deployment = () => get(`/v2/deployments/${id}`);
    expect((await revision()).status).toBe('CREATING');
    expect((await revision()).status).toBe('CREATING');
    await db('revisions').where({ id: revisionId }).update({ status_message: 'cloning' });
    expect((await revision()).status_message).toBe('cloning');
    const before = await deployment();
    expect(await deployment()).toEqual(before);
    // A change of the latest revision alone (not of the deployment's row) shows in the deployment's view.
    await db('revisions').where({ id: revisionId }).update({ repo_commit_sha: 'c0ffee' });
    expect((await deployment()).source_revision_config.repo_commit_sha).toBe('c0ffee');
    await db('deployments').where({ id }).update({ url: 'http://127.0.0.1:1/changed' });
    expect((await deployment()).url).toBe('http://127.0.0.1:1/changed');
    // READY with an active revision, its idle period ending in a second: the row stays as it is, the view does not.
    const { unusedAfterDays } = testConfig();
    await db('deployments')
      .where({ id })
      .update({
        status: 'READY',
        active_revision_id: revisionId,
        last_run_at: db.raw(`now() - make_interval(days => ?) + interval '1 second'`, [unusedAfterDays]),
      });
    expect((await deployment()).status).toBe('READY');
    expect((await deployment()).status).toBe('READY');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await deployment()).status).toBe('UNUSED');
  });
});
