/**
 * Opens the container engine graphx is configured for: the Docker Engine API socket named by
 * GRAPHX_CONTAINER_SOCKET, else podman's API service started on `<dataDir>/containers/engine.sock` with graphx's own
 * engine configuration. Only composition roots (the worker, `graphx images`) call this.
 */
import path from 'node:path';
import type { GraphxConfig } from '../config';
import { DockerEngine } from './dockerEngine';
import type { ContainerEngine } from './engine';
import { writeEngineConfig } from './engineConfig';
import { ensurePodmanService } from './podmanService';

export interface OpenedEngine {
  engine: ContainerEngine;
  /** Stops the podman service when this process started it. */
  close: () => Promise<void>;
}

/** Connects to the configured engine and checks that it answers. */
export async function openContainerEngine(config: GraphxConfig): Promise<OpenedEngine> {
  const files = writeEngineConfig({ dir: path.join(config.dataDir, 'containers'), storeDir: config.containerStoreDir });
  if (config.containerSocket) {
    const engine = new DockerEngine(config.containerSocket, files.ulimits);
    await engine.ping();
    return { engine, close: async () => {} };
  }
  const service = await ensurePodmanService(files);
  const engine = new DockerEngine(service.socketPath, files.ulimits);
  await engine.ping();
  return { engine, close: service.stop };
}
