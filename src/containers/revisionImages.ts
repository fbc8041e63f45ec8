/**
 * Revision images (issue 10): a `codehost` revision's clone built into an image on the runtime image, and the
 * `image_uri` of an `external_docker`/`internal_docker` revision pulled with its registry credentials. Both run in the
 * engine: the build context is a tar stream of a staging directory (hard links of the clone), no host path is
 * mounted, the control plane's environment never reaches it. The image contract is in docs/internal-contracts.md.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ContainerEngineError, type ContainerEngine, type ImageInfo, type RegistryAuth } from './engine';
import { createBuildCgroup, type BuildCgroup } from './buildCgroup';
import { DEFAULT_REGISTRY_HOSTS, openBuildEgress, type BuildEgress } from './buildEgress';
import { buildIdLine, buildStepCpuTicks, killBuildSteps } from './buildSteps';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import {
  BUILD_ENV_MOUNT,
  buildEnvFile,
  revisionDockerfiles,
  stageBuildContext,
  type RevisionDockerfileInput,
} from './revisionBuildContext';

export interface RevisionImage {
  ref: string;
  /** `sha256:…`: the registry's manifest digest when there is one, else the image id. */
  digest: string | null;
}

/** Repository prefix of built revision images: `localhost/graphx-app-<deployment>:<revision>`. */
export const BUILT_IMAGE_PREFIX = 'localhost/graphx-app-';

/** How long a cancelled build's steps are looked for (buildSteps.ts). */
const STOP_LOOK_MS = 30_000;

export interface BuildRevisionImageOptions {
  /** The clone (repository root) on the host. */
  repoDir: string;
  /** Directory to stage the build context in, suffixed per attempt (removed afterwards). */
  stagingDir: string;
  /** `localhost/graphx-app-<deployment>:<revision>`. */
  tag: string;
  dockerfile: Omit<RevisionDockerfileInput, 'runtimeImage'>;
  secrets: Array<{ name: string; value: string }>;
  labels?: Record<string, string>;
  onOutput?: (line: string) => void;
  signal?: AbortSignal;
  /** Told the build's id once it has one: `RevisionImages.stepCpuTicks(id)` reads the CPU time its steps use. */
  onBuildId?: (buildId: string) => void;
  /** The runtime image to build on (one per Node major: runtimeImageFor); default the default major's. */
  runtimeImage?: string;
}

/** What one revision build may use. */
export interface BuildLimits {
  /** Memory of each RUN step, swap included (GRAPHX_BUILD_MEMORY_MB). */
  memoryMb: number;
  /** Processes and threads of all of a build's steps together. */
  pidsLimit: number;
  /** Hosts the dependency install may reach over HTTPS (GRAPHX_BUILD_REGISTRY_HOSTS; `.example.com`: subdomains). */
  registryHosts: string[];
}

/** A build's process limit: room for npm/yarn/pnpm workers and a parallel compiler, not for a fork bomb. */
export const BUILD_PIDS_LIMIT = 512;

export const DEFAULT_BUILD_LIMITS: BuildLimits = {
  memoryMb: 2048,
  pidsLimit: BUILD_PIDS_LIMIT,
  registryHosts: DEFAULT_REGISTRY_HOSTS,
};

/** Builds and pulls revision images through one engine, on one runtime image. */
export class RevisionImages {
  private readonly runtimeImages = new Map<string, Promise<string>>();

  constructor(
    readonly engine: ContainerEngine,
    /** The hash-tagged runtime image of the default Node major, which revision images start `FROM` by default. */
    readonly runtimeImageRef: string,
    readonly limits: BuildLimits = DEFAULT_BUILD_LIMITS,
    /**
     * Builds (or finds) the runtime image of another Node major (graphx.json `node_version`), or one a Python app can
     * build on when the default one cannot serve it; absent: none.
     */
    private readonly prepareRuntimeImage?: (nodeMajor: number, log: (line: string) => void, python: boolean) => Promise<string>,
    readonly defaultNodeMajor: number = DEFAULT_NODE_MAJOR,
    /** Whether the default runtime image has Python (a registry's `node` image has none: baseImage.ts baseServesPython). */
    readonly defaultServesPython = true,
  ) {}

  /**
   * The runtime image for a Node major (and a Python app): the default one, or one built on the right base the first
   * time a revision asks for it (minutes once per machine: its base and runtime image), then found by content hash.
   * @throws Error when this engine has no way to prepare another one.
   */
  async runtimeImageFor(nodeMajor: number, log: (line: string) => void = () => {}, python = false): Promise<string> {
    if (nodeMajor === this.defaultNodeMajor && (!python || this.defaultServesPython)) return this.runtimeImageRef;
    const needs = python ? `Node ${nodeMajor} with Python` : `Node ${nodeMajor}`;
    if (!this.prepareRuntimeImage) throw new ContainerEngineError(`no runtime image for ${needs} here`);
    const key = `${nodeMajor}${python && !this.defaultServesPython ? '+python' : ''}`;
    let prepared = this.runtimeImages.get(key);
    if (!prepared) {
      prepared = this.prepareRuntimeImage(nodeMajor, log, python);
      // A failure is not remembered: the next revision tries again.
      prepared.catch(() => this.runtimeImages.delete(key));
      this.runtimeImages.set(key, prepared);
    }
    return prepared;
  }

  /** True for the images graphx built (the ones a deployment's deletion may remove; a pulled image_uri may be shared). */
  static isBuiltRef(ref: string): boolean {
    return ref.startsWith(BUILT_IMAGE_PREFIX);
  }

  /** The image reference of a revision's built image. */
  static tagFor(deploymentId: string, revisionId: string): string {
    return `${BUILT_IMAGE_PREFIX}${deploymentId.toLowerCase()}:${revisionId.toLowerCase()}`;
  }

  /**
   * The tag of a deployment's newest dependency image (`…:deps`). It keeps that image, the install layer a code-only
   * change reuses, from being removed as an unnamed leftover; the revision images build on it by id.
   */
  static dependencyTag(revisionTag: string): string {
    return revisionTag.replace(/:[^:/]+$/, ':deps');
  }

  /** CPU time used so far by the running steps of build `buildId` (see buildStepCpuTicks). */
  static stepCpuTicks(buildId: string): number | null {
    return buildStepCpuTicks(buildId, BUILD_ENV_MOUNT);
  }

  /** Removes the images graphx built for a deployment's revisions (a deleted deployment's); missing ones are skipped. */
  async removeBuiltImages(deploymentId: string, revisionIds: string[]): Promise<void> {
    for (const revisionId of revisionIds) await this.engine.removeImage(RevisionImages.tagFor(deploymentId, revisionId));
    // Only a cache: an engine that will not drop it yet (an image still built on it) must not fail the deletion.
    await this.engine
      .removeImage(RevisionImages.dependencyTag(RevisionImages.tagFor(deploymentId, 'any')))
      .catch(() => undefined);
  }

  /** Builds a revision image from a clone. @throws ContainerEngineError with the engine's message (a step failed). */
  async build(options: BuildRevisionImageOptions): Promise<RevisionImage> {
    const { appSubdir, python } = options.dockerfile;
    const context = stageBuildContext(options.repoDir, options.stagingDir, appSubdir, python);
    try {
      const buildId = startBuildAttempt(options);
      const installs = options.dockerfile.lockInstall !== null || options.dockerfile.customInstall !== null || python !== null;
      const { cgroup, egress } = await this.confineBuild(buildId, installs, options.onOutput);
      let image: ImageInfo;
      try {
        fs.writeFileSync(
          path.join(context, 'graphx', 'build.env'),
          buildEnvFile(options.secrets) + egress.envLines + buildIdLine(buildId),
          { mode: 0o644 },
        );
        image = await this.buildInContext(context, options, cgroup, egress);
      } finally {
        await egress.close();
        cgroup.release();
      }
      return { ref: options.tag, digest: digestOf(image, options.tag) };
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
  }

  /**
   * What confines a build on this host: a cgroup bounding its processes and, when it installs dependencies, a network
   * namespace that reaches only the package registries. The build log says which of them could not be had.
   */
  private async confineBuild(
    buildId: string,
    installs: boolean,
    onOutput: ((line: string) => void) | undefined,
  ): Promise<{ cgroup: BuildCgroup; egress: BuildEgress }> {
    // A cgroup or a namespace by path means something only to an engine on this host that takes them by path.
    const host = await this.engine.buildHost();
    const cgroup: BuildCgroup =
      host.cgroupDriver === 'cgroupfs'
        ? createBuildCgroup(buildId, this.limits.pidsLimit)
        : {
            cgroupParent: null,
            unavailable: `the engine's cgroup driver is ${host.cgroupDriver ?? 'unknown'}`,
            release: () => {},
          };
    if (cgroup.unavailable) onOutput?.(`No process limit on this build: ${cgroup.unavailable}.`);
    let egress: BuildEgress;
    try {
      egress =
        installs && host.podman && host.cgroupDriver === 'cgroupfs'
          ? await openBuildEgress(this.limits.registryHosts)
          : { namespacePath: null, envLines: '', unavailable: 'the engine is not podman on this host', close: async () => {} };
    } catch (error) {
      cgroup.release(); // The build never starts: its cgroup must not outlive this attempt.
      throw error;
    }
    if (installs && egress.unavailable) {
      onOutput?.(`The dependency install uses the engine's bridge, not only the registries: ${egress.unavailable}.`);
    }
    return { cgroup, egress };
  }

  /** Builds the dependency image (when there is an install), then the revision image on it, from the staged context. */
  private async buildInContext(
    context: string,
    options: BuildRevisionImageOptions,
    cgroup: BuildCgroup,
    egress: BuildEgress,
  ): Promise<ImageInfo> {
    const runtimeImage = options.runtimeImage ?? this.runtimeImageRef;
    const dockerfiles = revisionDockerfiles({ ...options.dockerfile, runtimeImage });
    const common = {
      contextDir: context,
      onOutput: options.onOutput,
      signal: options.signal,
      memoryMb: this.limits.memoryMb,
      cgroupParent: cgroup.cgroupParent ?? undefined,
    };
    if (dockerfiles.dependencies) {
      fs.writeFileSync(path.join(context, 'Dockerfile.deps'), dockerfiles.dependencies);
      // The install reaches the package registries through the allowlisting proxy (buildEgress.ts), else the
      // engine's bridge (never the host's loopback services); only the files it reads are sent.
      const dependencies = await this.engine.buildImage({
        ...common,
        tag: RevisionImages.dependencyTag(options.tag),
        dockerfile: 'Dockerfile.deps',
        include: [
          'Dockerfile.deps',
          'graphx',
          ...(options.dockerfile.customInstall ? ['repo'] : ['deps']),
          ...(options.dockerfile.python ? ['python'] : []),
        ],
        network: egress.namespacePath ? { namespacePath: egress.namespacePath } : 'bridge',
      });
      await egress.close();
      // By id: the deployment's dependency tag may move to a newer revision's install meanwhile.
      const dependencyImage = dependencies.id.replace(/^sha256:/, '');
      dockerfiles.image = revisionDockerfiles({ ...options.dockerfile, runtimeImage, dependencyImage }).image;
    }
    fs.writeFileSync(path.join(context, 'Dockerfile'), dockerfiles.image);
    return this.engine.buildImage({
      ...common,
      // Only here: buildah keys the last step's cache on the build's labels, and the install step must stay cached.
      labels: options.labels,
      tag: options.tag,
      include: ['Dockerfile', 'graphx', 'repo'],
      network: 'none',
    });
  }

  /**
   * Pulls a user's image.
   * @throws ImagePullError naming the image; `needsCredentials` when the registry asked for (other) credentials.
   */
  async pull(imageUri: string, auth?: RegistryAuth): Promise<RevisionImage> {
    try {
      const image = await this.engine.pullImage(imageUri, auth);
      return { ref: imageUri, digest: digestOf(image, imageUri) };
    } catch (error) {
      const reason = (error as Error).message;
      const needsCredentials = /unauthorized|authentication required|denied|401|403/i.test(reason);
      throw new ImagePullError(
        needsCredentials
          ? `Image ${imageUri} could not be pulled: the registry refused ${auth ? 'the credentials given' : 'to serve it without credentials'}` +
              ` (${lastLine(reason)}). Name a deployment secret holding them in resource_spec.image_pull_secrets.`
          : `Image ${imageUri} could not be pulled: ${lastLine(reason)}`,
        needsCredentials,
      );
    }
  }
}

export class ImagePullError extends ContainerEngineError {
  override name = 'ImagePullError';
  constructor(
    message: string,
    readonly needsCredentials: boolean,
  ) {
    super(message);
  }
}

/**
 * Names a build attempt and clears the way for it. The build id lets a cancelled build's running step be found and
 * stopped (buildSteps.ts); an earlier attempt of the same image whose worker died may still be running in the engine,
 * so its step is stopped first. Aborting `options.signal` stops this attempt's steps.
 */
function startBuildAttempt(options: BuildRevisionImageOptions): string {
  const attempts = `${path.basename(options.tag)}-`;
  const buildId = `${attempts}${crypto.randomBytes(6).toString('hex')}`;
  options.onBuildId?.(buildId);
  if (killBuildSteps(attempts, BUILD_ENV_MOUNT, true) > 0)
    options.onOutput?.('Stopped the build an earlier attempt left running.');
  options.signal?.addEventListener('abort', () => stopBuildSteps(buildId), { once: true });
  return buildId;
}

/**
 * Stops the running steps of build `buildId`. The engine may be between steps when the build is given up: look until
 * a step was killed (a failed step ends the build) or for STOP_LOOK_MS.
 */
function stopBuildSteps(buildId: string): void {
  const until = Date.now() + STOP_LOOK_MS;
  const look = () => {
    if (killBuildSteps(buildId, BUILD_ENV_MOUNT) === 0 && Date.now() < until) setTimeout(look, 250).unref();
  };
  look();
}

/** The manifest digest of `ref`'s repository when the engine knows one, else the image id. */
function digestOf(image: ImageInfo, ref: string): string | null {
  const repository = ref.replace(/@.*$/, '').replace(/:[^:/]+$/, '');
  const repoDigest = image.repoDigests.find((entry) => entry.startsWith(`${repository}@`));
  return repoDigest ? repoDigest.slice(repoDigest.indexOf('@') + 1) : image.id || null;
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? text;
}
