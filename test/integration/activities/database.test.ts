import crypto from 'node:crypto';
import fs from 'node:fs';
import { Client as PgClient } from 'pg';
import { createActivities } from '../../../activities';
import {
  DEPLOYMENT_ROLE_CONNECTION_LIMIT,
  DEPLOYMENT_ROLE_STATEMENT_TIMEOUT,
  deploymentDatabaseExists,
  deploymentDatabaseName,
  deploymentDatabaseUri,
  dropDeploymentDatabase,
} from '../../../src/pipeline/deploymentDatabase';
import { buildPaths } from '../../../src/pipeline/revisionSpec';
import { activityEnv, createDeployment, runActivity, createTestDeps, writeBuild, type TestDeps } from './pipelineFixtures';

describe('provisionDatabase and teardownDeployment activities (real PostgreSQL)', () => {
  let deps: TestDeps;
  const provisioned: string[] = [];
  beforeAll(() => {
    deps = createTestDeps();
  });
  afterAll(async () => {
    for (const deploymentId of provisioned) await dropDeploymentDatabase(deps.db, deploymentId);
    await deps.close();
  });

  it('creates the deployment database and role once, sets READY, and the app can use it with its URI', async () => {
    const deployment = await createDeployment(deps.db, deps.secretBox);
    provisioned.push(deployment.deploymentId);
    const activities = createActivities(deps);
    await activityEnv().run(activities.provisionDatabase, { deploymentId: deployment.deploymentId });
    // A second run (a retried activity, or the next revision) finds everything in place.
    await activityEnv().run(activities.provisionDatabase, { deploymentId: deployment.deploymentId });
    const name = deploymentDatabaseName(deployment.deploymentId);
    const databases = await deps.db.raw('SELECT datname FROM pg_database WHERE datname = ?', [name]);
    expect(databases.rows).toHaveLength(1);
    const row = await deps.db('deployments').where({ id: deployment.deploymentId }).first('status', 'database_name');
    expect(row).toEqual({ status: 'READY', database_name: name });

    const client = new PgClient({
      connectionString: deploymentDatabaseUri(deps.config, deps.db, deps.secretBox, deployment.deploymentId),
    });
    await client.connect();
    try {
      const who = await client.query('SELECT current_user, current_database()');
      expect(who.rows[0]).toEqual({ current_user: name, current_database: name });
      await client.query('CREATE TABLE checkpoints (id int)');
    } finally {
      await client.end();
    }
  });

  it('teardown drops the database and role, deletes tokens, build dirs and marks the deployment deleted', async () => {
    const deployment = await createDeployment(deps.db, deps.secretBox);
    const activities = createActivities(deps);
    await activityEnv().run(activities.provisionDatabase, { deploymentId: deployment.deploymentId });
    writeBuild(deps.config, deployment.revisionId);
    await deps
      .db('service_tokens')
      .insert({ id: crypto.randomUUID(), deployment_id: deployment.deploymentId, token_hash: 'f'.repeat(64) });
    await deps.db('deployments').where({ id: deployment.deploymentId }).update({ status: 'AWAITING_DELETE' });

    await activityEnv().run(activities.teardownDeployment, { deploymentId: deployment.deploymentId });
    // Safe to run twice (a worker killed after the drop, before marking the deployment deleted).
    await activityEnv().run(activities.teardownDeployment, { deploymentId: deployment.deploymentId });

    expect(await deploymentDatabaseExists(deps.db, deployment.deploymentId)).toBe(false);
    const role = await deps.db.raw('SELECT 1 FROM pg_roles WHERE rolname = ?', [deploymentDatabaseName(deployment.deploymentId)]);
    expect(role.rows).toHaveLength(0);
    expect(await deps.db('service_tokens').where({ deployment_id: deployment.deploymentId })).toHaveLength(0);
    const row = await deps.db('deployments').where({ id: deployment.deploymentId }).first('status', 'deleted_at');
    expect(row.status).toBe('AWAITING_DELETE');
    expect(row.deleted_at).toBeInstanceOf(Date);
    expect(fs.existsSync(buildPaths(deps.config.dataDir, deployment.revisionId).root)).toBe(false);
    // Without the flag the tracing project stays.
    expect(await deps.db('tracing_projects').where({ deployment_id: deployment.deploymentId })).toHaveLength(1);
  });

  it('teardown deletes the tracing project when delete_tracing_project is set on the deployment or passed in', async () => {
    const flagged = await createDeployment(deps.db, deps.secretBox);
    await deps.db('deployments').where({ id: flagged.deploymentId }).update({ delete_tracing_project: true });
    const passed = await createDeployment(deps.db, deps.secretBox);
    await deps.db('deployments').whereIn('id', [flagged.deploymentId, passed.deploymentId]).update({ status: 'AWAITING_DELETE' });
    const activities = createActivities(deps);
    await activityEnv().run(activities.teardownDeployment, { deploymentId: flagged.deploymentId });
    await activityEnv().run(activities.teardownDeployment, { deploymentId: passed.deploymentId, deleteTracingProject: true });
    expect(await deps.db('tracing_projects').whereIn('deployment_id', [flagged.deploymentId, passed.deploymentId])).toHaveLength(
      0,
    );
  });

  it('limits a deployment role: connection limit, statement timeout, no connection to the control-plane or another deployment database', async () => {
    const [own, other] = [await createDeployment(deps.db, deps.secretBox), await createDeployment(deps.db, deps.secretBox)];
    provisioned.push(own.deploymentId, other.deploymentId);
    const activities = createActivities(deps);
    await activityEnv().run(activities.provisionDatabase, { deploymentId: own.deploymentId });
    await activityEnv().run(activities.provisionDatabase, { deploymentId: other.deploymentId });
    const name = deploymentDatabaseName(own.deploymentId);
    const role = await deps.db.raw('SELECT rolconnlimit, rolconfig FROM pg_roles WHERE rolname = ?', [name]);
    expect(role.rows[0].rolconnlimit).toBe(DEPLOYMENT_ROLE_CONNECTION_LIMIT);
    expect(role.rows[0].rolconfig).toEqual([`statement_timeout=${DEPLOYMENT_ROLE_STATEMENT_TIMEOUT}`]);

    const ownUri = new URL(deploymentDatabaseUri(deps.config, deps.db, deps.secretBox, own.deploymentId));
    const controlPlaneDatabase = (await deps.db.raw('SELECT current_database() AS name')).rows[0].name as string;
    for (const database of [controlPlaneDatabase, deploymentDatabaseName(other.deploymentId)]) {
      const uri = new URL(ownUri);
      uri.pathname = `/${database}`;
      const client = new PgClient({ connectionString: uri.toString() });
      await expect(client.connect()).rejects.toThrow(/permission denied for database/);
      await client.end().catch(() => {});
    }
    const client = new PgClient({ connectionString: ownUri.toString() });
    await client.connect();
    try {
      expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe(DEPLOYMENT_ROLE_STATEMENT_TIMEOUT);
    } finally {
      await client.end();
    }
  });

  it('refuses to tear down a deployment the database does not mark for deletion (a forged delete signal)', async () => {
    const deployment = await createDeployment(deps.db, deps.secretBox);
    provisioned.push(deployment.deploymentId);
    const activities = createActivities(deps);
    await activityEnv().run(activities.provisionDatabase, { deploymentId: deployment.deploymentId });
    // The workflow's own status write cannot produce the mark either.
    await runActivity(activities.recordDeploymentStatus, { deploymentId: deployment.deploymentId, status: 'AWAITING_DELETE' });
    await expect(
      activityEnv().run(activities.teardownDeployment, { deploymentId: deployment.deploymentId }),
    ).rejects.toMatchObject({ nonRetryable: true, type: 'NotMarkedForDeletion' });
    expect(await deploymentDatabaseExists(deps.db, deployment.deploymentId)).toBe(true);
    const row = await deps.db('deployments').where({ id: deployment.deploymentId }).first('status', 'deleted_at');
    expect(row).toEqual({ status: 'READY', deleted_at: null });
  });

  it('a deployment being deleted gets no database', async () => {
    const deployment = await createDeployment(deps.db, deps.secretBox);
    await deps.db('deployments').where({ id: deployment.deploymentId }).update({ status: 'AWAITING_DELETE' });
    await expect(
      activityEnv().run(createActivities(deps).provisionDatabase, { deploymentId: deployment.deploymentId }),
    ).rejects.toMatchObject({
      nonRetryable: true,
    });
    expect(await deploymentDatabaseExists(deps.db, deployment.deploymentId)).toBe(false);
  });
});
