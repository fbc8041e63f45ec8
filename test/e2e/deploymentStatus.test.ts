/**
 * Deployment status as a user reads it (issue 24, point 8): a failed first build does not leave the deployment
 * AWAITING_DATABASE, the `status` filter finds UNUSED deployments (UNUSED is computed, not stored), and UNKNOWN is what
 * a deployment reads while its target cannot bring its active revision's instances back.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildPaths } from '../../src/pipeline/revisionSpec';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const settled = (status: string) => status === 'DEPLOYED' || status.endsWith('_FAILED');

describe('deployment status', () => {
  let pipeline: PipelineStack;
  beforeAll(async () => {
    pipeline = await startPipelineStack();
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  const deploymentStatus = async (id: string) => (await pipeline.api('GET', `/v2/deployments/${id}`)).body.status as string;
  async function statusBecomes(id: string, wanted: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let status = await deploymentStatus(id);
    while (status !== wanted && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = await deploymentStatus(id);
    }
    return status;
  }
  async function deploy(name: string, files: Record<string, string | null> = {}) {
    const repo = createGitRepo(FIXTURE);
    if (Object.keys(files).length > 0) repo.commit('changes', files);
    const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
    expect(created.status).toBe(201);
    const { id, latest_revision_id: revisionId } = created.body as { id: string; latest_revision_id: string };
    await pipeline.waitForRevision(id, revisionId, settled, 180_000);
    return { id, revisionId, repo };
  }

  it('a deployment whose first build fails becomes READY once its database exists, not AWAITING_DATABASE forever', async () => {
    const { id, revisionId } = await deploy(`broken-${crypto.randomBytes(3).toString('hex')}`, { 'graphx.json': '{"graphs": ' });
    const revision = (await pipeline.api('GET', `/v2/deployments/${id}/revisions/${revisionId}`)).body;
    expect(revision.status).toBe('BUILD_FAILED');
    expect(await statusBecomes(id, 'READY')).toBe('READY');
  });

  it('?status=UNUSED lists a deployment idle past GRAPHX_UNUSED_AFTER_DAYS, and ?status=READY then leaves it out', async () => {
    const idle = await deploy(`idle-${crypto.randomBytes(3).toString('hex')}`);
    const busy = await deploy(`busy-${crypto.randomBytes(3).toString('hex')}`);
    // 29 days pass for one of them (the default is 28): its last run and last change move back.
    await pipeline.stack.db.raw(
      "update deployments set last_run_at = now() - interval '29 days', updated_at = now() - interval '29 days' where id = ?",
      [idle.id],
    );
    const ids = async (status: string) =>
      ((await pipeline.api('GET', `/v2/deployments?status=${status}&limit=100`)).body.resources as Array<{ id: string }>).map(
        (deployment) => deployment.id,
      );
    expect(await deploymentStatus(idle.id)).toBe('UNUSED');
    expect(await ids('UNUSED')).toContain(idle.id);
    expect(await ids('UNUSED')).not.toContain(busy.id);
    expect(await ids('READY')).toContain(busy.id);
    expect(await ids('READY')).not.toContain(idle.id);
  });

  it('is UNKNOWN while its target cannot bring the active revision back, and READY once a revision serves again', async () => {
    const { id, revisionId, repo } = await deploy(`lost-${crypto.randomBytes(3).toString('hex')}`);
    expect(await deploymentStatus(id)).toBe('READY');
    // The app's files are lost and its process dies: the supervisor's replacement cannot start.
    fs.rmSync(buildPaths(pipeline.dataDir, revisionId).src, { recursive: true, force: true });
    const serving = await pipeline.stack.db('local_instances').where({ deployment_id: id, status: 'serving' }).first('pid');
    process.kill(-serving.pid, 'SIGKILL');
    expect(await statusBecomes(id, 'UNKNOWN', 120_000)).toBe('UNKNOWN');

    repo.commit('a new revision', { 'README.md': 'again\n' });
    const patched = await pipeline.api('PATCH', `/v2/deployments/${id}`, { source_revision_config: { repo_ref: 'main' } });
    await pipeline.waitForRevision(id, patched.body.latest_revision_id, settled, 180_000);
    expect(await deploymentStatus(id)).toBe('READY');
  }, 300_000);
});
