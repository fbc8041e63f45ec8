/**
 * The container engine port: what graphx needs from an engine to build images and run instances. Callers import this
 * interface; the composition root picks the implementation (dockerEngine.ts, the Docker Engine API over a unix
 * socket, served by Docker or by `podman system service`).
 */

export interface ImageInfo {
  id: string;
  /** `name@sha256:…` entries once the image was pushed or pulled; empty for a local-only build. */
  repoDigests: string[];
  labels: Record<string, string>;
}

export interface BuildImageOptions {
  /** Directory sent as the build context (a tar stream: nothing else of the host is visible to the build). */
  contextDir: string;
  /** Dockerfile path inside the context. */
  dockerfile?: string;
  tag: string;
  labels?: Record<string, string>;
  /** Each line of build output, as it comes. */
  onOutput?: (line: string) => void;
  /** Aborting ends the build request; the engine stops the build. */
  signal?: AbortSignal;
  /** Only these entries of `contextDir` are sent (default: all). */
  include?: string[];
  /**
   * The RUN steps' network: `none` (loopback only), `bridge` (the engine's NATed bridge: the internet, not the
   * host's loopback), or an existing network namespace joined by path (podman on this host only). Unset: the
   * engine's default, which for podman's compat API is the host's own network.
   */
  network?: 'none' | 'bridge' | { namespacePath: string };
  /** Memory limit of each RUN step (swap included: no paging past it). */
  memoryMb?: number;
  /** cgroup the RUN steps are created under (cgroupfs path), e.g. one whose pids.max bounds the build. */
  cgroupParent?: string;
}

export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress?: string;
}

export interface BindMount {
  source: string;
  target: string;
  readOnly?: boolean;
}

export interface ContainerSpec {
  name: string;
  image: string;
  cmd?: string[];
  env?: Record<string, string>;
  labels?: Record<string, string>;
  /** `uid[:gid]` the process runs as. */
  user?: string;
  workingDir?: string;
  /** Publish one container port on 127.0.0.1 only (host port 0: the engine picks one). */
  publish?: { containerPort: number; hostPort: number };
  mounts?: BindMount[];
  readOnlyRootfs?: boolean;
  /** tmpfs mounts: path → options (e.g. `rw,size=64m,mode=1777`). */
  tmpfs?: Record<string, string>;
  memoryMb?: number;
  /** Soft memory limit (what the container is expected to use; the kernel reclaims above it first). */
  memoryReservationMb?: number;
  /** CPU quota in cores (0.5 = half a core). */
  cpus?: number;
  /** Relative CPU weight when cores are contended (1024 = one core's worth). */
  cpuShares?: number;
  pidsLimit?: number;
  /** Network mode or name; default the engine's bridge. `none` for no network at all. */
  network?: string;
}

export interface ContainerLogLine {
  stream: 'stdout' | 'stderr';
  /** Unix second the line was written (engines differ in precision: seconds is what all give). */
  second: number;
  text: string;
}

export type ContainerState = 'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead';

export interface ContainerInfo {
  id: string;
  name: string;
  image: string;
  state: ContainerState;
  exitCode: number | null;
  oomKilled: boolean;
  labels: Record<string, string>;
  /** Host port bound on 127.0.0.1 for the published container port, once running. */
  hostPort: number | null;
}

/** A network's subnets and gateways as the engine assigned them (IPAM). */
export interface NetworkAddresses {
  subnets: string[];
  gateways: string[];
}

export interface ContainerEngine {
  /** Resolves when the engine answers; rejects with a message naming the socket otherwise. */
  ping(): Promise<void>;
  /**
   * What the engine offers builds: whether it is podman (joins a network namespace by path) and how it places
   * containers in cgroups (`cgroupfs`: by path, so `cgroupParent` is a path; or `systemd`).
   */
  buildHost(): Promise<{ podman: boolean; cgroupDriver: string | null }>;
  inspectImage(ref: string): Promise<ImageInfo | null>;
  buildImage(options: BuildImageOptions): Promise<ImageInfo>;
  /** Creates an image from a root filesystem tarball (the offline base image). */
  importImage(tarPath: string, ref: string, changes?: string[]): Promise<ImageInfo>;
  pullImage(ref: string, auth?: RegistryAuth): Promise<ImageInfo>;
  /** Gives an existing image a second reference. */
  tagImage(ref: string, newRef: string): Promise<void>;
  /** Removes a tag (and the image when no other tag holds it); a missing image is not an error. */
  removeImage(ref: string): Promise<void>;
  /**
   * Creates a bridge network isolated from every other isolated network (a missing one only; a concurrent create is
   * not an error). Containers on one such network reach each other and the outside world, not other networks.
   */
  ensureIsolatedNetwork(name: string, labels?: Record<string, string>): Promise<NetworkAddresses>;
  /** Removes a network; a missing one is not an error. The addresses it had, null when it was missing. */
  removeNetwork(name: string): Promise<NetworkAddresses | null>;
  /** Creates and starts a container. */
  runContainer(spec: ContainerSpec): Promise<ContainerInfo>;
  inspectContainer(idOrName: string): Promise<ContainerInfo | null>;
  /** Containers (running or not) carrying all the given labels. */
  listContainers(labels: Record<string, string>): Promise<ContainerInfo[]>;
  /** SIGTERM, then SIGKILL after `graceSeconds`; a stopped or missing container is not an error. */
  stopContainer(idOrName: string, graceSeconds: number): Promise<void>;
  /** Removes a container, killing it first if it runs; a missing one is not an error. */
  removeContainer(idOrName: string): Promise<void>;
  /** Resolves with the exit code when the container stops. */
  waitContainer(idOrName: string): Promise<number>;
  /** The last `tail` lines of stdout and stderr together. */
  containerLogs(idOrName: string, tail: number): Promise<string>;
  /** Complete output lines written at or after `sinceSecond` (Unix seconds), oldest first, each with its second. */
  containerLogLines(idOrName: string, sinceSecond: number): Promise<ContainerLogLine[]>;
}

/** An engine answered with an error; `statusCode` is the HTTP status of the Engine API when there is one. */
export class ContainerEngineError extends Error {
  override name = 'ContainerEngineError';
  constructor(
    message: string,
    readonly statusCode: number | null = null,
  ) {
    super(message);
  }
}
