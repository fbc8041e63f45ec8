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
import { createBuildCgroup } from './buildCgroup';
import { DEFAULT_REGISTRY_HOSTS, openBuildEgress } from './buildEgress';
import { buildIdLine, buildStepCpuTicks, killBuildSteps } from './buildSteps';
import { APP_DIR, RUNTIME_HOME, RUNTIME_UID } from '@graphx/contract/image';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { INSTANCE_ENV } from '@graphx/contract/instanceEnv';
import { BERRY_BIN } from './runtimeImage';
import { linkTree } from '@graphx/kit/os/linkTree';

export interface RevisionImage {
  ref: string;
  /** `sha256:…`: the registry's manifest digest when there is one, else the image id. */
  digest: string | null;
}

/** Files that decide what the lock-file install installs: only they are in the dependency layer's context. */
const INSTALL_INPUTS = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  '.yarn/releases',
  '.yarn/plugins',
  '.yarn/patches',
];

export interface RevisionDockerfileInput {
  runtimeImage: string;
  /** graphx.json's directory, relative to the repository root (`''` at the root). */
  appSubdir: string;
  /** graphx.json's path relative to the repository root. */
  configPath: string;
  /** The lock file's own install (its own cached layer), or null. */
  lockInstall: string | null;
  /** `install_command` set by the user: run after the whole repository is copied (it may read anything). */
  customInstall: string | null;
  buildCommand: string | null;
  /** graphx.json `dockerfile_lines`, as written. */
  dockerfileLines: string[];
  /** True for yarn 2+ repositories: `yarn` is berry in every step. */
  yarnBerry: boolean;
}

/** Repository prefix of built revision images: `localhost/graphx-app-<deployment>:<revision>`. */
export const BUILT_IMAGE_PREFIX = 'localhost/graphx-app-';

/** How long a cancelled build's steps are looked for (buildSteps.ts). */
const STOP_LOOK_MS = 30_000;

/** Where the build's secrets file is mounted in RUN steps (never copied into a layer). */
const BUILD_ENV_MOUNT = '/run/graphx/build.env';

/** The two Dockerfiles of a revision image (see revisionDockerfiles). */
export interface RevisionDockerfiles {
  /** The dependency image: the install step, the only one with network (to the package registries). Null: none. */
  dependencies: string | null;
  /** The revision image, `FROM` the dependency image (by id) or the runtime image; its RUN steps have no network. */
  image: string;
}

/**
 * The Dockerfiles of a revision image. Layers, from least to most often changed: the lock-file install (its context
 * holds only the package manifests and lock files, so a code-only change finds it cached), the repository, the build
 * command, the user's `dockerfile_lines`, the compilation of TypeScript graphs. The install is built first, as an
 * image of its own, because it is the one step that needs the network: the engine sets a build's network for all of
 * its RUN steps (`RUN --network` is not in podman 4.3), so the rest is a second build without any. Secrets reach
 * install and build steps as a file bind-mounted from the context for that RUN only: no value is in a layer, an
 * `ENV` or the image history.
 */
export function revisionDockerfiles(input: RevisionDockerfileInput & { dependencyImage?: string }): RevisionDockerfiles {
  const appDir = path.posix.join(APP_DIR, input.appSubdir);
  const user = `${RUNTIME_UID}:${RUNTIME_UID}`;
  const run = (command: string) =>
    `RUN --mount=type=bind,source=graphx/build.env,target=${BUILD_ENV_MOUNT} ` +
    JSON.stringify(['/bin/sh', '-c', `set -a && . ${BUILD_ENV_MOUNT} && set +a && ${command}`]);
  const header = (from: string) => [
    `FROM ${from}`,
    `USER ${user}`,
    `ENV ${INSTANCE_ENV.configPath}=${path.posix.join(APP_DIR, input.configPath)}`,
    ...(input.yarnBerry ? [`ENV PATH=${BERRY_BIN}:$PATH`] : []),
    `WORKDIR ${appDir}`,
  ];
  let dependencies: string[] | null = null;
  if (input.lockInstall) {
    dependencies = [...header(input.runtimeImage), `COPY --chown=${user} deps/ ${APP_DIR}/`, run(input.lockInstall), ''];
  } else if (input.customInstall) {
    // install_command may read any file: it runs on the whole repository.
    dependencies = [...header(input.runtimeImage), `COPY --chown=${user} repo/ ${APP_DIR}/`, run(input.customInstall), ''];
  }
  const lines = [
    ...(dependencies
      ? [`FROM ${input.dependencyImage ?? DEPENDENCY_IMAGE_PLACEHOLDER}`, `USER ${user}`, `WORKDIR ${appDir}`]
      : header(input.runtimeImage)),
    `COPY --chown=${user} repo/ ${APP_DIR}/`,
  ];
  if (input.buildCommand) lines.push(run(input.buildCommand));
  lines.push(
    ...input.dockerfileLines,
    `USER ${user}`,
    `WORKDIR ${appDir}`,
    // TypeScript graphs compiled now: instances may run on a read-only root filesystem.
    `RUN ["node", "${RUNTIME_HOME}/bin/graphx.js", "runtime-prepare"]`,
    '',
  );
  return { dependencies: dependencies?.join('\n') ?? null, image: lines.join('\n') };
}

/** What the revision image's FROM names until the dependency image is built. */
const DEPENDENCY_IMAGE_PLACEHOLDER = '<dependency image>';

/** `export NAME='value'` lines for sh; names that are not shell variable names are left out. */
export function buildEnvFile(secrets: Array<{ name: string; value: string }>): string {
  return secrets
    .filter((secret) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(secret.name))
    .map((secret) => `export ${secret.name}='${secret.value.replaceAll("'", `'\\''`)}'\n`)
    .join('');
}

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
  private readonly runtimeImages = new Map<number, Promise<string>>();

  constructor(
    readonly engine: ContainerEngine,
    /** The hash-tagged runtime image of the default Node major, which revision images start `FROM` by default. */
    readonly runtimeImageRef: string,
    readonly limits: BuildLimits = DEFAULT_BUILD_LIMITS,
    /** Builds (or finds) the runtime image of another Node major (graphx.json `node_version`); absent: none. */
    private readonly prepareRuntimeImage?: (nodeMajor: number, log: (line: string) => void) => Promise<string>,
    readonly defaultNodeMajor: number = DEFAULT_NODE_MAJOR,
  ) {}

  /**
   * The runtime image for a Node major: the default one, or one built on that major's base the first time a revision
   * asks for it (minutes once per machine: its base and runtime image), then found by content hash.
   * @throws Error when this engine has no way to prepare another major.
   */
  async runtimeImageFor(nodeMajor: number, log: (line: string) => void = () => {}): Promise<string> {
    if (nodeMajor === this.defaultNodeMajor) return this.runtimeImageRef;
    if (!this.prepareRuntimeImage) throw new ContainerEngineError(`no runtime image for Node ${nodeMajor} here`);
    let prepared = this.runtimeImages.get(nodeMajor);
    if (!prepared) {
      prepared = this.prepareRuntimeImage(nodeMajor, log);
      // A failure is not remembered: the next revision tries again.
      prepared.catch(() => this.runtimeImages.delete(nodeMajor));
      this.runtimeImages.set(nodeMajor, prepared);
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
    // Each attempt stages its own context: an abandoned attempt of the same revision (its worker died, its step was
    // stopped below) must not remove the context this one is sending.
    const context = `${options.stagingDir}-${crypto.randomBytes(4).toString('hex')}`;
    fs.rmSync(context, { recursive: true, force: true });
    fs.mkdirSync(path.join(context, 'graphx'), { recursive: true, mode: 0o700 });
    try {
      linkTree(options.repoDir, path.join(context, 'repo'), (name) => name !== '.git');
      const appSource = path.join(options.repoDir, options.dockerfile.appSubdir);
      const depsTarget = path.join(context, 'deps', options.dockerfile.appSubdir);
      fs.mkdirSync(depsTarget, { recursive: true });
      for (const input of INSTALL_INPUTS) {
        const source = path.join(appSource, input);
        if (fs.existsSync(source)) linkTree(source, path.join(depsTarget, input));
      }
      // The build id lets a cancelled build's running step be found and stopped (buildSteps.ts). An earlier attempt
      // of the same image whose worker died may still be running in the engine: its step is stopped first.
      const attempts = `${path.basename(options.tag)}-`;
      const buildId = `${attempts}${crypto.randomBytes(6).toString('hex')}`;
      options.onBuildId?.(buildId);
      if (killBuildSteps(attempts, BUILD_ENV_MOUNT, true) > 0)
        options.onOutput?.('Stopped the build an earlier attempt left running.');
      // The engine may be between steps when the build is given up: look until a step was killed (a failed step ends
      // the build) or for STOP_LOOK_MS.
      const stopSteps = () => {
        const until = Date.now() + STOP_LOOK_MS;
        const look = () => {
          if (killBuildSteps(buildId, BUILD_ENV_MOUNT) === 0 && Date.now() < until) setTimeout(look, 250).unref();
        };
        look();
      };
      options.signal?.addEventListener('abort', stopSteps, { once: true });
      // A cgroup or a namespace by path means something only to an engine on this host that takes them by path.
      const host = await this.engine.buildHost();
      const cgroup =
        host.cgroupDriver === 'cgroupfs'
          ? createBuildCgroup(buildId, this.limits.pidsLimit)
          : {
              cgroupParent: null,
              unavailable: `the engine's cgroup driver is ${host.cgroupDriver ?? 'unknown'}`,
              release: () => {},
            };
      if (cgroup.unavailable) options.onOutput?.(`No process limit on this build: ${cgroup.unavailable}.`);
      const installs = options.dockerfile.lockInstall !== null || options.dockerfile.customInstall !== null;
      const egress =
        installs && host.podman && host.cgroupDriver === 'cgroupfs'
          ? await openBuildEgress(this.limits.registryHosts)
          : { namespacePath: null, envLines: '', unavailable: 'the engine is not podman on this host', close: async () => {} };
      if (installs && egress.unavailable) {
        options.onOutput?.(`The dependency install uses the engine's bridge, not only the registries: ${egress.unavailable}.`);
      }
      fs.writeFileSync(
        path.join(context, 'graphx', 'build.env'),
        buildEnvFile(options.secrets) + egress.envLines + buildIdLine(buildId),
        { mode: 0o644 },
      );
      const runtimeImage = options.runtimeImage ?? this.runtimeImageRef;
      const dockerfiles = revisionDockerfiles({ ...options.dockerfile, runtimeImage });
      const common = {
        contextDir: context,
        onOutput: options.onOutput,
        signal: options.signal,
        memoryMb: this.limits.memoryMb,
        cgroupParent: cgroup.cgroupParent ?? undefined,
      };
      let image: ImageInfo;
      try {
        if (dockerfiles.dependencies) {
          fs.writeFileSync(path.join(context, 'Dockerfile.deps'), dockerfiles.dependencies);
          // The install reaches the package registries through the allowlisting proxy (buildEgress.ts), else the
          // engine's bridge (never the host's loopback services); only the files it reads are sent.
          const dependencies = await this.engine.buildImage({
            ...common,
            tag: RevisionImages.dependencyTag(options.tag),
            dockerfile: 'Dockerfile.deps',
            include: ['Dockerfile.deps', 'graphx', options.dockerfile.lockInstall ? 'deps' : 'repo'],
            network: egress.namespacePath ? { namespacePath: egress.namespacePath } : 'bridge',
          });
          await egress.close();
          // By id: the deployment's dependency tag may move to a newer revision's install meanwhile.
          const dependencyImage = dependencies.id.replace(/^sha256:/, '');
          dockerfiles.image = revisionDockerfiles({
            ...options.dockerfile,
            runtimeImage,
            dependencyImage,
          }).image;
        }
        fs.writeFileSync(path.join(context, 'Dockerfile'), dockerfiles.image);
        image = await this.engine.buildImage({
          ...common,
          // Only here: buildah keys the last step's cache on the build's labels, and the install step must stay cached.
          labels: options.labels,
          tag: options.tag,
          include: ['Dockerfile', 'graphx', 'repo'],
          network: 'none',
        });
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
 * Registry credentials for `imageUri` from the named secrets' values: a Docker config JSON (`{"auths": {host:
 * {username, password} | {auth: base64}}}`, what `docker login` writes and Kubernetes pull secrets hold) whose host
 * matches the image's registry, or `username:password` for any registry. The first that applies wins.
 */
export function registryAuthFor(imageUri: string, secretValues: string[]): RegistryAuth | undefined {
  const registry = registryHost(imageUri);
  for (const value of secretValues) {
    const trimmed = value.trim();
    if (trimmed.startsWith('{')) {
      let parsed: { auths?: Record<string, { username?: string; password?: string; auth?: string }> };
      try {
        parsed = JSON.parse(trimmed) as typeof parsed;
      } catch {
        continue;
      }
      for (const [host, entry] of Object.entries(parsed.auths ?? {})) {
        if (registryHost(`${host.replace(/^https?:\/\//, '').replace(/\/.*$/, '')}/x`) !== registry) continue;
        const [username, password] = entry.auth
          ? splitOnce(Buffer.from(entry.auth, 'base64').toString('utf8'))
          : [entry.username, entry.password];
        if (username && password) return { username, password, serveraddress: registry };
      }
      continue;
    }
    const [username, password] = splitOnce(trimmed);
    if (username && password) return { username, password, serveraddress: registry };
  }
  return undefined;
}

/** The registry host of an image reference (`docker.io` for a name without one), as Docker resolves it. */
export function registryHost(imageUri: string): string {
  const first = imageUri.split('/')[0] ?? '';
  const hasHost = imageUri.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return hasHost ? first : 'docker.io';
}

function splitOnce(text: string): [string | undefined, string | undefined] {
  const colon = text.indexOf(':');
  return colon > 0 ? [text.slice(0, colon), text.slice(colon + 1)] : [undefined, undefined];
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
