/**
 * The build step with the container runner (ActivityDeps.images): a `codehost` clone becomes a revision image built
 * in the engine from a Dockerfile generated from graphx.json; an `external_docker`/`internal_docker` revision pulls
 * its `image_uri`. The image's reference and digest are recorded on the revision and named in the heartbeat.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import path from 'node:path';
import { ContainerEngineError } from '../src/containers/engine';
import { ImagePullError, registryAuthFor, RevisionImages } from '../src/containers/revisionImages';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { buildPaths, isImageSource, type RevisionSpec } from '../src/pipeline/revisionSpec';
import type { GraphxConfig } from '@graphx/contract/graphxConfig';
import { IMAGE_LABELS } from '@graphx/contract/image';
import type { ActivityDeps } from './deps';
import type { StepProgress } from './support/progress';
import { watchForStall } from './support/stallWatch';
import { wantsYarnBerry } from './support/packageManagers';

/** Builds the revision's clone into its image. */
export async function buildRevisionImage(
  deps: ActivityDeps & { images: RevisionImages },
  spec: RevisionSpec,
  { configFile, config }: { configFile: string; config: GraphxConfig },
  /** The lock file's install command (build.ts decides it), or null. */
  lockFileInstall: string | null,
  progress: StepProgress,
  options: { stallLimitSeconds: number; nodeMajor: number },
): Promise<void> {
  const { stallLimitSeconds, nodeMajor } = options;
  const { root, src } = buildPaths(deps.config.dataDir, spec.revisionId);
  const appDir = path.dirname(configFile);
  const custom = spec.sourceConfig.install_command ?? null;
  const lockInstall = custom ? null : lockFileInstall;
  const tag = RevisionImages.tagFor(spec.deploymentId, spec.revisionId);
  let buildId: string | null = null;
  const stall = watchForStall(progress, {
    limitSeconds: stallLimitSeconds,
    cpuTicks: () => (buildId ? RevisionImages.stepCpuTicks(buildId) : null),
  });
  const signal = AbortSignal.any([
    Context.current().cancellationSignal,
    AbortSignal.timeout(deps.config.buildTimeoutSeconds * 1000),
    stall.signal,
  ]);
  let image;
  try {
    progress.setPhase('image', `Preparing the runtime image on Node ${nodeMajor}`);
    const runtimeImage = await untilAborted(
      signal,
      deps.images.runtimeImageFor(nodeMajor, (line) => progress.line(line)),
    );
    progress.setPhase('image', `Building image ${tag} on ${runtimeImage} (Node ${nodeMajor})`);
    // Raced against the signal: a build stuck in our own code (or the engine's) ignores it, and must not hold the step.
    image = await untilAborted(
      signal,
      deps.images.build({
        repoDir: src,
        stagingDir: path.join(root, 'context'),
        tag,
        dockerfile: {
          appSubdir: path.relative(src, appDir),
          configPath: path.relative(src, configFile),
          lockInstall,
          customInstall: custom,
          buildCommand: spec.sourceConfig.build_command ?? null,
          dockerfileLines: config.dockerfileLines,
          yarnBerry: lockInstall?.startsWith('yarn') === true && wantsYarnBerry(appDir),
        },
        secrets: spec.secrets,
        labels: { [IMAGE_LABELS.deploymentId]: spec.deploymentId, [IMAGE_LABELS.revisionId]: spec.revisionId },
        onOutput: (line) => progress.line(line),
        onBuildId: (id) => (buildId = id),
        signal,
        runtimeImage,
      }),
    );
  } catch (error) {
    if (Context.current().cancellationSignal.aborted) {
      progress.line('Cancelled: the image build was stopped.', 'warn');
      await Context.current().cancelled;
    }
    if (stall.message) {
      progress.line(stall.message, 'error');
      throw ApplicationFailure.nonRetryable(progress.redact(stall.message), 'BuildFailed');
    }
    if (!(error instanceof ContainerEngineError)) throw error;
    const why = signal.aborted
      ? `did not finish within the ${deps.config.buildTimeoutSeconds} s build time limit`
      : `failed: ${progress.redact(error.message)}`;
    const message = `The image build of ${tag} ${why}: ${progress.lastLines(10).join('\n') || '(no output)'}`;
    progress.line(message, 'error');
    throw ApplicationFailure.nonRetryable(message, 'BuildFailed');
  } finally {
    stall.stop();
  }
  await record(deps, spec, image, progress);
  progress.setPhase('done', `Built image ${image.ref} (${image.digest ?? 'no digest'}).`);
}

/** `work`, or a ContainerEngineError as soon as `signal` aborts (the abandoned work is left to notice the signal). */
function untilAborted<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ContainerEngineError(`stopped: ${(signal.reason as Error)?.message ?? 'aborted'}`));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Pulls an image source's `image_uri` with the credentials its deployment names. */
export async function pullRevisionImage(
  deps: ActivityDeps & { images: RevisionImages },
  spec: RevisionSpec,
  progress: StepProgress,
): Promise<void> {
  const imageUri = spec.imageUri;
  if (!imageUri) {
    throw ApplicationFailure.nonRetryable(`A '${spec.source}' revision needs source_revision_config.image_uri.`, 'BuildFailed');
  }
  const names = (spec.sourceConfig.resource_spec?.image_pull_secrets ?? []).map((secret) => secret.name);
  const missing = names.filter((name) => !spec.secrets.some((secret) => secret.name === name));
  if (missing.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `resource_spec.image_pull_secrets names ${missing.join(', ')}, which the deployment has no secret for.`,
      'BuildFailed',
    );
  }
  const values = names.map((name) => spec.secrets.find((secret) => secret.name === name)!.value);
  const auth = registryAuthFor(imageUri, values);
  progress.setPhase('pull', `Pulling image ${imageUri}${auth ? ` as ${auth.username}` : ''}`);
  let image;
  try {
    image = await deps.images.pull(imageUri, auth);
  } catch (error) {
    if (!(error instanceof ImagePullError)) throw error;
    const message = progress.redact(error.message);
    progress.line(message, 'error');
    throw ApplicationFailure.nonRetryable(message, 'BuildFailed');
  }
  await record(deps, spec, image, progress);
  progress.setPhase('done', `Pulled image ${image.ref} (${image.digest ?? 'no digest'}).`);
}

/** An earlier revision's built image that a redeploy runs again. */
export interface RedeployedImage {
  revisionId: string;
  ref: string;
  digest: string | null;
  repoCommitSha: string;
}

/**
 * The image a redeploy (rollback) runs: the earlier revision's built image, while the engine still holds it. A redeploy
 * copies that revision's source config and secrets, so rebuilding could only differ where a rollback must not: a
 * branch that moved on, a dependency range resolved anew. Null (clone and build as usual) otherwise.
 */
export async function redeployedImage(
  deps: ActivityDeps & { images: RevisionImages },
  spec: RevisionSpec,
): Promise<RedeployedImage | null> {
  if (!spec.redeployedFromRevisionId || isImageSource(spec)) return null;
  const earlier = await deps
    .db('revisions')
    .where({ id: spec.redeployedFromRevisionId, deployment_id: spec.deploymentId })
    .first('image_ref', 'image_digest', 'repo_commit_sha');
  if (!earlier?.image_ref || !earlier.repo_commit_sha || !RevisionImages.isBuiltRef(earlier.image_ref)) return null;
  if (!(await deps.images.engine.inspectImage(earlier.image_ref))) return null;
  return {
    revisionId: spec.redeployedFromRevisionId,
    ref: earlier.image_ref,
    digest: earlier.image_digest ?? null,
    repoCommitSha: earlier.repo_commit_sha,
  };
}

/**
 * The build step of a redeploy: the earlier image gets this revision's tag (so deleting the deployment removes it like
 * any built image) and is recorded with its digest; nothing is built.
 */
export async function reuseRedeployedImage(
  deps: ActivityDeps & { images: RevisionImages },
  spec: RevisionSpec,
  earlier: RedeployedImage,
  progress: StepProgress,
): Promise<void> {
  const tag = RevisionImages.tagFor(spec.deploymentId, spec.revisionId);
  progress.setPhase('image', `Redeploy of revision ${earlier.revisionId}: reusing its image ${earlier.ref}`);
  await deps.images.engine.tagImage(earlier.ref, tag);
  await record(deps, spec, { ref: tag, digest: earlier.digest }, progress);
  progress.setPhase('done', `Image ${earlier.ref} runs again as ${tag} (${earlier.digest ?? 'no digest'}); nothing was rebuilt.`);
}

/** Without the container runner an image source cannot run: say so instead of trying to clone. */
export function imageSourceNeedsContainers(spec: RevisionSpec): never {
  throw ApplicationFailure.nonRetryable(
    `A '${spec.source}' revision runs image ${spec.imageUri ?? '(none)'}, which needs the container runner ` +
      '(GRAPHX_RUNNER=container and a container engine); this worker runs apps as processes.',
    'BuildFailed',
  );
}

async function record(
  deps: ActivityDeps,
  spec: RevisionSpec,
  image: { ref: string; digest: string | null },
  progress: StepProgress,
): Promise<void> {
  await new PipelineState(deps.db).recordImage(spec.revisionId, image);
  progress.setImage(image);
}
