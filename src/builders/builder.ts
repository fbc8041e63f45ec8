/**
 * The builder port: the build half of a runner, as the target port (src/targets/target.ts) is its run half. The
 * build activity validates graphx.json and hands the app to the builder the composition root chose with the target
 * (src/targets/choose.ts): the host builder (process runner: install and build commands in the clone's directory) or
 * the image builder (container runner: an image in the engine; a Kubernetes target pushes that image). Builders know
 * nothing of Temporal: they report through BuildProgress, stop on the context's signal, and throw the domain errors
 * below, which the activity turns into non-retryable failures of the same type.
 */
import type { GraphxConfig as AppConfig, Runner } from '@graphx/contract/graphxConfig';
import type { RevisionSpec } from '../pipeline/revisionSpec';

/** The build failed for a reason the user must fix (a command's exit, a time limit, no progress, a bad image). */
export class BuildFailed extends Error {
  override name = 'BuildFailed';
}

/** The build stopped because its context's signal said so (the activity was cancelled). */
export class BuildCancelled extends Error {
  override name = 'BuildCancelled';
}

/** What a build reports as it goes: the activity's StepProgress (heartbeats, revision log lines, secrets masked). */
export interface BuildProgress {
  setPhase(phase: string, message?: string): void;
  line(message: string, level?: string): void;
  redact(text: string): string;
  lastLines(count?: number): string[];
  /** Something happened that is progress without a line (CPU time used by the build's processes). */
  touch(): void;
  readonly currentPhase: string;
  readonly lastActivityAt: number;
}

/** An image a build produced, pulled or reused, as the revision records it. */
export interface RevisionImage {
  ref: string;
  digest: string | null;
}

export interface BuildContext {
  progress: BuildProgress;
  /** Aborted when the build must stop (activity cancellation); the builder then throws BuildCancelled. */
  cancelled: AbortSignal;
  /** Records the revision's image (the database row and the heartbeat); image builders call it once they have one. */
  recordImage: (image: RevisionImage) => Promise<void>;
}

/** The app a build is given: graphx.json (absolute path) as the contract read it for this builder's runner. */
export interface AppToBuild {
  configFile: string;
  config: AppConfig;
}

/** An earlier revision's build that a redeploy (rollback) runs again instead of cloning and building. */
export interface EarlierBuild {
  revisionId: string;
  ref: string;
  digest: string | null;
  repoCommitSha: string;
}

export interface RevisionBuilder {
  /** The runner whose graphx.json keys apply (the contract's per-runner key table). */
  readonly runner: Runner;
  /** The earlier build a redeploy of `spec` can run again, or null (clone and build as usual). */
  earlierBuild(spec: RevisionSpec): Promise<EarlierBuild | null>;
  /** Makes `earlier` this revision's build without building anything. */
  reuseEarlier(spec: RevisionSpec, earlier: EarlierBuild, context: BuildContext): Promise<void>;
  /** Builds a `codehost` revision's clone. @throws BuildFailed, BuildCancelled */
  build(spec: RevisionSpec, app: AppToBuild, context: BuildContext): Promise<void>;
  /** Fetches an image source's `image_uri`. @throws BuildFailed (also when this builder cannot run images) */
  pullImage(spec: RevisionSpec, context: BuildContext): Promise<void>;
  /** Removes what builds of a deleted deployment left beside the clones (images); tolerates having run already. */
  removeDeploymentArtefacts(deploymentId: string, revisionIds: string[]): Promise<void>;
}
