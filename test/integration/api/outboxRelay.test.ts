/**
 * The transactional outbox: a revision committed to the database reaches its deployment workflow even when the
 * process that committed it died before telling Temporal (no relay ran); a relay started later delivers it.
 */
import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import request from 'supertest';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { deliverPendingOutbox } from '../../../src/pipeline/outbox';
import { deploymentWorkflowId } from '../../../workflows/messages';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

describe('pipeline outbox', () => {
  let db: Db;
  let temporal: Client;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  it('delivers a committed revision later, exactly once, to the workflow named after the deployment', async () => {
    const config = testConfig();
    // An API without a relay: as if it crashed right after its commit.
    const app = createApp({ config, db, secretBox: testSecretBox(config), temporal });
    const { apiKey } = await createTenant(db);
    const created = await request(app.callback())
      .post('/v2/deployments')
      .set('X-Api-Key', apiKey)
      .send({
        name: `outbox-${crypto.randomBytes(3).toString('hex')}`,
        source: 'codehost',
        source_config: { repo_url: 'https://e.com/r.git' },
        source_revision_config: {},
      });
    expect(created.status).toBe(201);
    const handle = temporal.workflow.getHandle(deploymentWorkflowId(created.body.id));
    await expect(handle.describe()).rejects.toThrow();

    await deliverPendingOutbox(db, temporal);
    await deliverPendingOutbox(db, temporal);

    const rows = await db('pipeline_outbox').where({ deployment_id: created.body.id });
    expect(rows).toHaveLength(1);
    expect(rows[0].delivered_at).not.toBeNull();
    expect(rows[0].attempts).toBe(1);
    const description = await handle.describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.searchAttributes.GraphxDeploymentId).toEqual([created.body.id]);
    // No worker polls graphx-control in this test, so the signal waits in history; the workflow is the one to take it.
    const history = await handle.fetchHistory();
    const signals = (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.workflowExecutionSignaledEventAttributes?.signalName).toBe('enqueueRevision');
    await handle.terminate('test over');
  });
});
