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

    // Relays of other suites share this database and may hold the row (SKIP LOCKED) for a moment: whoever delivers
    // it, it must be delivered once. Bounded: 10 s.
    const deadline = Date.now() + 10_000;
    let rows = await db('pipeline_outbox').where({ deployment_id: created.body.id });
    while (rows[0]?.delivered_at == null && Date.now() < deadline) {
      await deliverPendingOutbox(db, temporal);
      rows = await db('pipeline_outbox').where({ deployment_id: created.body.id });
      if (rows[0]?.delivered_at == null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await deliverPendingOutbox(db, temporal);
    rows = await db('pipeline_outbox').where({ deployment_id: created.body.id });

    expect(rows).toHaveLength(1);
    expect({ delivered: rows[0].delivered_at !== null, lastError: rows[0].last_error }).toEqual({
      delivered: true,
      lastError: null,
    });
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
