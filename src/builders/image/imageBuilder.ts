/**
 * The container runner's builder: a `codehost` clone becomes a revision image built in the engine from a Dockerfile
 * generated from graphx.json; an `external_docker`/`internal_docker` revision pulls its `image_uri`; a redeploy runs
 * the earlier revision's image again. The image's reference and digest are recorded on the revision and named in the
 * heartbeat (BuildContext.recordImage).
 */
import path from 'node:path';
import type { GraphxConfig } from '../../config';
import { ContainerEngineError } from '../../containers/engine';
import { registryAuthFor } from '../../containers/registryAuth';
import { ImagePullError, RevisionImages, type BuildRevisionImageOptions } from '../../containers/revisionImages';
import { conciseBuildText, failedBuildOutput } from '../../containers/revisionBuildContext';
import type { Db } from '../../db/knex';
import { buildPaths, isImageSource, type RevisionSpec } from '../../pipeline/revisionSpec';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { IMAGE_LABELS } from '@graphx/contract/image';
import {
  BuildCancelled,
  BuildFailed,
  type AppToBuild,
  type BuildContext,
  type EarlierBuild,
  type RevisionBuilder,
} from '../builder';
import { defaultInstallCommand, wantsYarnBerry } from '../packageManagers';
import { ConfigError } from '@graphx/kit/errors';
import { checkPythonDependencies } from '@graphx/runtime/python/pythonRequirements';
import { uvProjectRoot } from '@graphx/runtime/python/uvProject';
import { watchForStall, type StallWatch } from '../stallWatch';

export interface ImageBuilderOptions {
  config: Pick<GraphxConfig, 'dataDir' | 'buildTimeoutSeconds' | 'buildStallSeconds'>;
  db: Db;
  images: RevisionImages;
}

export class ImageBuilder implements RevisionBuilder {
  readonly runner = 'container' as const;
  readonly images: RevisionImages;

  constructor(private readonly options: ImageBuilderOptions) {
    this.images = options.images;
  }

  /** Builds the revision's clone into its image. */
  async build(spec: RevisionSpec, app: AppToBuild, context: BuildContext): Promise<void> {
    const { progress } = context;
    const { dataDir, buildStallSeconds, buildTimeoutSeconds } = this.options.config;
    const nodeMajor = app.config.nodeMajor ?? DEFAULT_NODE_MAJOR;
    const { root, src } = buildPaths(dataDir, spec.revisionId);
    const tag = RevisionImages.tagFor(spec.deploymentId, spec.revisionId);
    let buildId: string | null = null;
    const stall = watchForStall(progress, {
      limitSeconds: buildStallSeconds,
      cpuTicks: () => (buildId ? RevisionImages.stepCpuTicks(buildId) : null),
    });
    const signal = AbortSignal.any([context.cancelled, AbortSignal.timeout(buildTimeoutSeconds * 1000), stall.signal]);
    let image;
    try {
      checkPythonDependenciesOf(app, src, progress);
      progress.setPhase('image', `Preparing the runtime image on Node ${nodeMajor}`);
      const runtimeImage = await untilAborted(
        signal,
        this.images.runtimeImageFor(nodeMajor, (line) => progress.line(line), app.config.python !== null),
      );
      progress.setPhase('image', `Building image ${tag} on ${runtimeImage} (Node ${nodeMajor})`);
      // Raced against the signal: a build stuck in our own code (or the engine's) ignores it, and must not hold the step.
      const buildOnce = () =>
        untilAborted(
          signal,
          this.images.build({
            repoDir: src,
            stagingDir: path.join(root, 'context'),
            tag,
            dockerfile: dockerfileInput(spec, src, app),
            secrets: spec.secrets,
            labels: { [IMAGE_LABELS.deploymentId]: spec.deploymentId, [IMAGE_LABELS.revisionId]: spec.revisionId },
            onOutput: (line) => progress.line(line),
            onBuildId: (id) => (buildId = id),
            signal,
            runtimeImage,
          }),
        );
      try {
        image = await buildOnce();
      } catch (error) {
        if (signal.aborted || !isLostLayer(error)) throw error;
        // The engine's cache lookup met a layer another build's or a cleanup's removal took away meanwhile: the
        // same build again finds a consistent store (what is still cached is reused).
        progress.line(
          `The engine lost a cached layer during the build (${(error as Error).message.split('\n')[0]}); building again.`,
          'warn',
        );
        image = await buildOnce();
      }
    } catch (error) {
      throw buildFailure(error, { context, stall, signal, tag, buildTimeoutSeconds });
    } finally {
      stall.stop();
    }
    await context.recordImage(image);
    progress.setPhase('done', `Built image ${image.ref} (${image.digest ?? 'no digest'}).`);
  }

  /** Pulls an image source's `image_uri` with the credentials its deployment names. */
  async pullImage(spec: RevisionSpec, context: BuildContext): Promise<void> {
    const { progress } = context;
    const imageUri = spec.imageUri;
    if (!imageUri) throw new BuildFailed(`A '${spec.source}' revision needs source_revision_config.image_uri.`);
    const names = (spec.sourceConfig.resource_spec?.image_pull_secrets ?? []).map((secret) => secret.name);
    const missing = names.filter((name) => !spec.secrets.some((secret) => secret.name === name));
    if (missing.length > 0) {
      throw new BuildFailed(
        `resource_spec.image_pull_secrets names ${missing.join(', ')}, which the deployment has no secret for.`,
      );
    }
    const values = names.map((name) => spec.secrets.find((secret) => secret.name === name)!.value);
    const auth = registryAuthFor(imageUri, values);
    progress.setPhase('pull', `Pulling image ${imageUri}${auth ? ` as ${auth.username}` : ''}`);
    let image;
    try {
      image = await this.images.pull(imageUri, auth);
    } catch (error) {
      if (!(error instanceof ImagePullError)) throw error;
      const message = progress.redact(error.message);
      progress.line(message, 'error');
      throw new BuildFailed(message);
    }
    await context.recordImage(image);
    progress.setPhase('done', `Pulled image ${image.ref} (${image.digest ?? 'no digest'}).`);
  }

  /**
   * The image a redeploy (rollback) runs: the earlier revision's built image, while the engine still holds it. A
   * redeploy copies that revision's source config and secrets, so rebuilding could only differ where a rollback must
   * not: a branch that moved on, a dependency range resolved anew. Null (clone and build as usual) otherwise.
   */
  async earlierBuild(spec: RevisionSpec): Promise<EarlierBuild | null> {
    if (!spec.redeployedFromRevisionId || isImageSource(spec)) return null;
    const earlier = await this.options
      .db('revisions')
      .where({ id: spec.redeployedFromRevisionId, deployment_id: spec.deploymentId })
      .first('image_ref', 'image_digest', 'repo_commit_sha');
    if (!earlier?.image_ref || !earlier.repo_commit_sha || !RevisionImages.isBuiltRef(earlier.image_ref)) return null;
    if (!(await this.images.engine.inspectImage(earlier.image_ref))) return null;
    return {
      revisionId: spec.redeployedFromRevisionId,
      ref: earlier.image_ref,
      digest: earlier.image_digest ?? null,
      repoCommitSha: earlier.repo_commit_sha,
    };
  }

  /**
   * A redeploy's build: the earlier image gets this revision's tag (so deleting the deployment removes it like any
   * built image) and is recorded with its digest; nothing is built.
   */
  async reuseEarlier(spec: RevisionSpec, earlier: EarlierBuild, context: BuildContext): Promise<void> {
    const tag = RevisionImages.tagFor(spec.deploymentId, spec.revisionId);
    context.progress.setPhase('image', `Redeploy of revision ${earlier.revisionId}: reusing its image ${earlier.ref}`);
    await this.images.engine.tagImage(earlier.ref, tag);
    await context.recordImage({ ref: tag, digest: earlier.digest });
    context.progress.setPhase(
      'done',
      `Image ${earlier.ref} runs again as ${tag} (${earlier.digest ?? 'no digest'}); nothing was rebuilt.`,
    );
  }

  /** The images built for the deployment (pulled `image_uri`s may be shared and stay). */
  removeDeploymentArtefacts(deploymentId: string, revisionIds: string[]): Promise<void> {
    return this.images.removeBuiltImages(deploymentId, revisionIds);
  }
}

/** A reserved or misplaced Python dependency (or uv project) fails the build naming the key, before anything is built. */
function checkPythonDependenciesOf({ configFile, config }: AppToBuild, src: string, progress: BuildContext['progress']): void {
  if (!config.python) return;
  try {
    checkPythonDependencies(config.python.dependencies, path.dirname(configFile));
    if (config.python.source) uvProjectRoot(config.python.source, path.dirname(configFile), src);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    progress.line(error.message, 'error');
    throw new BuildFailed(error.message);
  }
}

/** What the revision image's Dockerfiles are generated from: graphx.json's place in the clone and its build settings. */
function dockerfileInput(
  spec: RevisionSpec,
  src: string,
  { configFile, config }: AppToBuild,
): BuildRevisionImageOptions['dockerfile'] {
  const appDir = path.dirname(configFile);
  const custom = spec.sourceConfig.install_command ?? null;
  const lockInstall = custom ? null : defaultInstallCommand(appDir);
  return {
    appSubdir: path.relative(src, appDir),
    configPath: path.relative(src, configFile),
    lockInstall,
    customInstall: custom,
    buildCommand: spec.sourceConfig.build_command ?? null,
    dockerfileLines: config.dockerfileLines,
    yarnBerry: lockInstall?.startsWith('yarn') === true && wantsYarnBerry(appDir),
    python: config.python,
  };
}

/**
 * The error an image build that did not finish ends with, said in the build log too: cancelled (not a failure), stalled,
 * out of time, or the engine's message with the output's last lines. An error that is not the engine's is a bug and
 * passes unchanged.
 */
function buildFailure(
  error: unknown,
  why: { context: BuildContext; stall: StallWatch; signal: AbortSignal; tag: string; buildTimeoutSeconds: number },
): unknown {
  const { progress } = why.context;
  if (why.context.cancelled.aborted) {
    progress.line('Cancelled: the image build was stopped.', 'warn');
    return new BuildCancelled('The image build was cancelled.');
  }
  if (why.stall.message) {
    progress.line(why.stall.message, 'error');
    return new BuildFailed(progress.redact(why.stall.message));
  }
  if (!(error instanceof ContainerEngineError)) return error;
  const ending = why.signal.aborted
    ? `did not finish within the ${why.buildTimeoutSeconds} s build time limit`
    : `failed: ${progress.redact(conciseBuildText(error.message))}`;
  const output = failedBuildOutput(progress.lastLines(30)).join('\n');
  const message = `The image build of ${why.tag} ${ending}: ${output || '(no output)'}`;
  progress.line(message, 'error');
  return new BuildFailed(message);
}

/** An engine error saying a layer or image vanished under the build (a concurrent removal), not the build's own fault. */
export function isLostLayer(error: unknown): boolean {
  return error instanceof ContainerEngineError && /\b(layer|image) not known\b/.test(error.message);
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
