/**
 * Opens the container engine graphx is configured for: the Docker Engine API socket named by
 * GRAPHX_CONTAINER_SOCKET, else podman's API service started on `<dataDir>/containers/engine.sock` with graphx's own
 * engine configuration. Only composition roots (the worker, `graphx images`) call this.
 */
import path from 'node:path';
import { projectRoot, type GraphxConfig } from '../config';
import { baseServesPython, ensureBaseImage, OFFLINE_BASE } from './baseImage';
import { DockerEngine } from './dockerEngine';
import type { ContainerEngine } from './engine';
import { writeEngineConfig } from './engineConfig';
import { ensurePodmanService } from './podmanService';
import { BUILD_PIDS_LIMIT, RevisionImages } from './revisionImages';
import { ensureRuntimeImage } from './runtimeImage';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { ContainerToolsMissing, findExecutable } from './toolCheck';

export interface OpenedEngine {
  engine: ContainerEngine;
  /** The Docker Engine API socket it answers on (a child process of the stack is given the same). */
  socketPath: string;
  /** The environment that points containers tools (skopeo) at this engine's store and registry configuration. */
  storageEnv: Record<string, string>;
  /** Stops the podman service when this process started it. */
  close: () => Promise<void>;
}

/**
 * Connects to the configured engine and checks that it answers. `takeOver`: a podman service found running on this data
 * dir (a dead predecessor's) is stopped by `close` as if this process had started it.
 */
export async function openContainerEngine(config: GraphxConfig, options: { takeOver?: boolean } = {}): Promise<OpenedEngine> {
  const files = writeEngineConfig({ dir: path.join(config.dataDir, 'containers'), storeDir: config.containerStoreDir });
  if (config.containerSocket) {
    const engine = new DockerEngine(config.containerSocket, files.ulimits);
    await engine.ping();
    return { engine, socketPath: config.containerSocket, storageEnv: files.env, close: async () => {} };
  }
  const service = await ensurePodmanService(files, { takeOver: options.takeOver });
  const engine = new DockerEngine(service.socketPath, files.ulimits);
  await engine.ping();
  return { engine, socketPath: service.socketPath, storageEnv: files.env, close: service.stop };
}

/**
 * The container runner's images on an open engine: the base and runtime images are built (or found by content hash)
 * first, so the first build of a revision does not pay for them. Composition roots call this with
 * the engine of the container runner (src/targets/choose.ts picked it) and pass the result as ActivityDeps.images.
 */
export async function openRevisionImages(
  engine: ContainerEngine,
  config: GraphxConfig,
  log: (line: string) => void,
): Promise<RevisionImages> {
  const servesPython = baseServesPython(config.runtimeBaseImage);
  const runtimeFor = async (nodeMajor: number, say: (line: string) => void, python = false) => {
    let baseImage = config.runtimeBaseImage;
    if (python && !servesPython) {
      say(`${baseImage} has no Python: a Python app builds on graphx's Debian base (Debian's Python)`);
      baseImage = OFFLINE_BASE;
    }
    const baseRef = await ensureBaseImage({ engine, baseImage, log: say, nodeMajor });
    return (await ensureRuntimeImage({ engine, baseRef, projectRoot, log: say })).ref;
  };
  return new RevisionImages(
    engine,
    await runtimeFor(DEFAULT_NODE_MAJOR, log),
    { memoryMb: config.buildMemoryMb, pidsLimit: BUILD_PIDS_LIMIT, registryHosts: config.buildRegistryHosts },
    runtimeFor,
    DEFAULT_NODE_MAJOR,
    servesPython,
  );
}

/**
 * Throws ContainerToolsMissing when a tool the configured container runner needs up front is not on PATH: podman and
 * runc when graphx starts its own engine (no GRAPHX_CONTAINER_SOCKET), mmdebstrap when the base image is built
 * offline. (A registry base that cannot be pulled needs mmdebstrap too: baseImage.ts says so when it happens.)
 */
export function checkContainerTools(config: GraphxConfig): void {
  if (!config.containerSocket) {
    const missing = ['podman', 'runc'].filter((tool) => !findExecutable(tool));
    if (missing.length > 0) throw new ContainerToolsMissing(missing, 'to run its own container engine');
  }
  if (config.runtimeBaseImage === OFFLINE_BASE && !findExecutable('mmdebstrap')) {
    throw new ContainerToolsMissing(['mmdebstrap'], `to build its base image (GRAPHX_RUNTIME_BASE_IMAGE=${OFFLINE_BASE})`);
  }
}
