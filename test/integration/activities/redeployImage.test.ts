/**
 * A redeploy (rollback) with the container runner runs the earlier revision's image again instead of cloning and
 * rebuilding (src/builders/image/imageBuilder.ts earlierBuild), and falls back to an ordinary clone and build when the engine
 * no longer holds that image. Real podman (the tests' shared engine), real PostgreSQL; the image is the small busybox
 * image standing in for a built one.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createActivities } from '../../../activities';
import { RevisionImages } from '../../../src/containers/revisionImages';
import { buildPaths } from '../../../src/pipeline/revisionSpec';
import { describeWithEngine, ensureBusyboxImage, startTestEngine, type TestEngine } from '../../support/containerEngine';
import type { ImageBuilder } from '../../../src/builders/image/imageBuilder';
import { activityEnv, addRevision, createDeployment, createTestDeps, withImageBuilder, type TestDeps } from './pipelineFixtures';

describeWithEngine('redeploy with the container runner', () => {
  let engine: TestEngine;
  let deps: TestDeps & { builder: ImageBuilder };
  let busyboxId: string;
  const tags: string[] = [];

  beforeAll(async () => {
    engine = await startTestEngine();
    const busybox = await ensureBusyboxImage(engine.engine);
    busyboxId = (await engine.engine.inspectImage(busybox))!.id;
    deps = withImageBuilder(createTestDeps(), new RevisionImages(engine.engine, busybox));
  }, 120_000);
  afterAll(async () => {
    for (const tag of tags) await engine.engine.removeImage(tag);
    await deps?.close();
  });

  /** A deployment whose first revision was built from commit `sha` (its image tagged in the engine or not), and a redeploy of it. */
  async function redeployOf(imageInEngine: boolean, sha: string) {
    const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl: 'file:///nonexistent-repo' });
    const earlier = deployment.revisionId;
    const ref = RevisionImages.tagFor(deployment.deploymentId, earlier);
    if (imageInEngine) {
      await engine.engine.tagImage(deps.builder.images.runtimeImageRef, ref);
      tags.push(ref);
    }
    await deps
      .db('revisions')
      .where({ id: earlier })
      .update({
        status: 'DEPLOYED',
        repo_commit_sha: sha,
        image_ref: ref,
        image_digest: `sha256:${busyboxId.replace(/^sha256:/, '')}`,
      });
    const redeploy = await addRevision(deps.db, deps.secretBox, deployment.deploymentId, { repoUrl: 'file:///nonexistent-repo' });
    await deps.db('revisions').where({ id: redeploy }).update({ redeployed_from_revision_id: earlier });
    return {
      deploymentId: deployment.deploymentId,
      earlier,
      redeploy,
      ref: { revisionId: redeploy, deploymentId: deployment.deploymentId },
    };
  }

  it('runs the earlier revision’s image again under the new revision’s tag, with its digest and commit, cloning and building nothing', async () => {
    const sha = crypto.randomBytes(20).toString('hex');
    const { deploymentId, earlier, redeploy, ref } = await redeployOf(true, sha);
    const activities = createActivities(deps);

    await expect(activityEnv().run(activities.cloneRepository, ref)).resolves.toEqual({ repoCommitSha: sha });
    await activityEnv().run(activities.buildApplication, ref);

    expect(fs.existsSync(buildPaths(deps.config.dataDir, redeploy).root)).toBe(false);
    const newTag = RevisionImages.tagFor(deploymentId, redeploy);
    tags.push(newTag);
    const row = await deps.db('revisions').where({ id: redeploy }).first('image_ref', 'image_digest', 'repo_commit_sha');
    expect(row).toEqual({ image_ref: newTag, image_digest: `sha256:${busyboxId.replace(/^sha256:/, '')}`, repo_commit_sha: sha });
    expect((await engine.engine.inspectImage(newTag))?.id).toBe(busyboxId);
    const logs = await deps.db('revision_logs').where({ revision_id: redeploy }).pluck('message');
    expect(logs.join('\n')).toContain(`reusing its image ${RevisionImages.tagFor(deploymentId, earlier)}`);
  });

  it('clones and builds as usual when the engine no longer holds the earlier revision’s image', async () => {
    const { ref } = await redeployOf(false, 'b'.repeat(40));
    await expect(activityEnv().run(createActivities(deps).cloneRepository, ref)).rejects.toMatchObject({
      message: expect.stringContaining('nonexistent-repo'),
    });
  });
});
