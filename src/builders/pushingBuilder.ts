/**
 * The Kubernetes runner's builder (issue 21): a revision is built exactly as for the container runner (the wrapped
 * ImageBuilder, in graphx's engine), then its image is pushed to the configured registry, and the revision records
 * `<repository>@<digest>`: what pods pull, so a moved tag never changes what a revision runs. An `external_docker`
 * revision's `image_uri` is copied registry to registry (no engine needed) and recorded by the digest of the copy; a
 * redeploy (rollback) records the earlier revision's pushed reference again without building, copying or pulling.
 */
import type { Db } from '../db/knex';
import { registryAuthFor, registryHost } from '../containers/registryAuth';
import { isImageSource, type RevisionSpec } from '../pipeline/revisionSpec';
import { ImagePushError, type ImagePusher, type PushedImage } from '../targets/kubernetes/imagePusher';
import { baseName } from '../targets/kubernetes/names';
import {
  BuildFailed,
  type AppToBuild,
  type BuildContext,
  type EarlierBuild,
  type RevisionBuilder,
  type RevisionImage,
} from './builder';

export interface PushingBuilderOptions {
  /**
   * The container runner's builder on this worker's engine; null on a worker without one (GRAPHX_WORKER_QUEUES
   * without `build`), which never builds and only needs what works without an engine.
   */
  inner: RevisionBuilder | null;
  pusher: ImagePusher;
  /** `host[:port]/path` the pusher pushes to (GRAPHX_KUBE_REGISTRY): a reference under it is one of ours. */
  repository: string;
  db: Db;
}

export class PushingBuilder implements RevisionBuilder {
  /** graphx.json is read as for containers: the image is the container runner's. */
  readonly runner = 'container' as const;

  constructor(private readonly options: PushingBuilderOptions) {}

  async build(spec: RevisionSpec, app: AppToBuild, context: BuildContext): Promise<void> {
    const inner = this.requireEngine();
    let local: RevisionImage | null = null;
    await inner.build(spec, app, {
      ...context,
      recordImage: async (image) => {
        local = image;
      },
    });
    const built = local as RevisionImage | null;
    if (!built) throw new BuildFailed('The image build finished without an image to push.');
    await this.pushed(spec, context, () =>
      this.options.pusher.push(built.ref, imageName(spec), imageTag(spec), (line) => context.progress.line(line)),
    );
  }

  /**
   * Copies the revision's `image_uri` to the registry. Credentials to read it: a deployment secret named in
   * `resource_spec.image_pull_secrets` holding them (as the container runner reads them), else none (a public image).
   * A redeploy of an `external_docker` revision runs the earlier copy's digest, never the tag again.
   */
  async pullImage(spec: RevisionSpec, context: BuildContext): Promise<void> {
    const imageUri = spec.imageUri;
    if (!imageUri) throw new BuildFailed(`A '${spec.source}' revision needs source_revision_config.image_uri.`);
    const earlier = await this.earlierPushed(spec);
    if (earlier) return this.reuseEarlier(spec, earlier, context);
    const names = (spec.sourceConfig.resource_spec?.image_pull_secrets ?? []).map((secret) => secret.name);
    const values = spec.secrets.filter((secret) => names.includes(secret.name)).map((secret) => secret.value);
    const auth = registryAuthFor(imageUri, values);
    context.progress.setPhase(
      'pull',
      `Copying image ${imageUri} to ${this.options.repository}${auth ? ` as ${auth.username}` : ''}`,
    );
    await this.pushed(spec, context, () =>
      this.options.pusher.copyRemote(imageUri, imageName(spec), imageTag(spec), {
        auth: auth ? { registry: registryHost(imageUri), username: auth.username, password: auth.password } : undefined,
        onLine: (line) => context.progress.line(line),
      }),
    );
  }

  /** A redeploy of a revision whose image is in the registry: that reference again (no clone, no build). */
  async earlierBuild(spec: RevisionSpec): Promise<EarlierBuild | null> {
    if (isImageSource(spec)) return null;
    const earlier = await this.earlierPushed(spec);
    return earlier?.repoCommitSha ? earlier : null;
  }

  async reuseEarlier(_spec: RevisionSpec, earlier: EarlierBuild, context: BuildContext): Promise<void> {
    context.progress.setPhase('image', `Redeploy of revision ${earlier.revisionId}: its image ${earlier.ref} runs again`);
    await context.recordImage({ ref: earlier.ref, digest: earlier.digest });
    context.progress.setPhase('done', `Image ${earlier.ref} runs again; nothing was rebuilt or pushed.`);
  }

  /**
   * The engine's built images go as for the container runner. Pushed images stay in the registry: its retention is
   * the operator's (a registry may be shared, and garbage collection is its own job).
   */
  async removeDeploymentArtefacts(deploymentId: string, revisionIds: string[]): Promise<void> {
    await this.options.inner?.removeDeploymentArtefacts(deploymentId, revisionIds);
  }

  private requireEngine(): RevisionBuilder {
    if (!this.options.inner) {
      throw new BuildFailed('This worker has no container engine to build images with (it does not poll the build queue).');
    }
    return this.options.inner;
  }

  /** Runs a push and records its digest reference; a registry's refusal is the build's failure, with its words. */
  private async pushed(spec: RevisionSpec, context: BuildContext, push: () => Promise<PushedImage>): Promise<void> {
    const { progress } = context;
    progress.setPhase('push', `Pushing the image of revision ${spec.revisionId} to ${this.options.repository}`);
    let image: PushedImage;
    try {
      image = await push();
    } catch (error) {
      if (!(error instanceof ImagePushError)) throw error;
      const message = progress.redact(error.message);
      progress.line(message, 'error');
      throw new BuildFailed(message);
    }
    await context.recordImage({ ref: image.ref, digest: image.digest });
    progress.setPhase('done', `Pushed image ${image.ref}.`);
  }

  /** The earlier revision of a redeploy, when its recorded image is a digest reference in our registry. */
  private async earlierPushed(spec: RevisionSpec): Promise<EarlierBuild | null> {
    if (!spec.redeployedFromRevisionId) return null;
    const earlier = await this.options
      .db('revisions')
      .where({ id: spec.redeployedFromRevisionId, deployment_id: spec.deploymentId })
      .first('image_ref', 'image_digest', 'repo_commit_sha');
    const ref: string | null = earlier?.image_ref ?? null;
    const repository = `${this.options.repository.replace(/\/+$/, '')}/`;
    if (!ref || !ref.startsWith(repository) || !/@sha256:[0-9a-f]{64}$/.test(ref)) return null;
    return {
      revisionId: spec.redeployedFromRevisionId,
      ref,
      digest: earlier.image_digest ?? ref.slice(ref.indexOf('@') + 1),
      repoCommitSha: earlier.repo_commit_sha ?? '',
    };
  }
}

/** The repository name of a deployment's images under the configured registry: its objects' base name. */
function imageName(spec: RevisionSpec): string {
  return baseName(spec);
}

/** One tag per revision, so the registry keeps every revision's image reachable by name as well as by digest. */
function imageTag(spec: RevisionSpec): string {
  return spec.revisionId.toLowerCase();
}
