import { createActivities } from '../../../activities';
import { runActivity, createDeployment, createTestDeps, type TestDeps } from './pipelineFixtures';

describe('recordRevisionStatus and recordDeploymentStatus activities', () => {
  let deps: TestDeps;
  beforeAll(() => {
    deps = createTestDeps();
  });
  afterAll(() => deps.close());

  const revision = (id: string) =>
    deps.db('revisions').where({ id }).first('status', 'status_message', 'failed_step', 'repo_commit_sha');

  it('records status, message, failed step and commit sha, and a failed revision can run again', async () => {
    const { revisionId } = await createDeployment(deps.db, deps.secretBox);
    const { recordRevisionStatus } = createActivities(deps);
    await runActivity(recordRevisionStatus, {
      revisionId,
      status: 'BUILD_FAILED',
      statusMessage: '`npm run build` exited with code 1: boom',
      failedStep: 'build',
      repoCommitSha: 'a'.repeat(40),
    });
    expect(await revision(revisionId)).toEqual({
      status: 'BUILD_FAILED',
      status_message: '`npm run build` exited with code 1: boom',
      failed_step: 'build',
      repo_commit_sha: 'a'.repeat(40),
    });
    await runActivity(recordRevisionStatus, { revisionId, status: 'BUILDING' });
    expect(await revision(revisionId)).toMatchObject({
      status: 'BUILDING',
      status_message: null,
      failed_step: null,
      repo_commit_sha: 'a'.repeat(40),
    });
  });

  it('a final status is never left, and DEPLOYED keeps the deployment url', async () => {
    const { revisionId, deploymentId, name } = await createDeployment(deps.db, deps.secretBox);
    const { recordRevisionStatus } = createActivities(deps);
    await runActivity(recordRevisionStatus, { revisionId, status: 'DEPLOYED' });
    await runActivity(recordRevisionStatus, { revisionId, status: 'DEPLOYING' });
    expect((await revision(revisionId)).status).toBe('DEPLOYED');
    const deployment = await deps.db('deployments').where({ id: deploymentId }).first('url');
    expect(deployment.url).toBe(deps.target.deploymentUrl(name));
  });

  it('a deployment awaiting deletion stays so', async () => {
    const { deploymentId } = await createDeployment(deps.db, deps.secretBox);
    const { recordDeploymentStatus } = createActivities(deps);
    // Only the API's delete marks a deployment for deletion.
    await deps.db('deployments').where({ id: deploymentId }).update({ status: 'AWAITING_DELETE' });
    await runActivity(recordDeploymentStatus, { deploymentId, status: 'READY' });
    expect((await deps.db('deployments').where({ id: deploymentId }).first('status')).status).toBe('AWAITING_DELETE');
  });
});
