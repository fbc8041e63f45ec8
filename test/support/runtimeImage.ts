/** The runtime image the container tests build on: built once per content change, on the offline base. */
import { projectRoot } from '../../src/config';
import { ensureBaseImage, OFFLINE_BASE } from '../../src/containers/baseImage';
import type { ContainerEngine } from '../../src/containers/engine';
import { ensureRuntimeImage, type RuntimeImage } from '../../src/containers/runtimeImage';

/** Builds or finds the base and runtime images (the first run on a machine takes about two minutes). */
export async function ensureTestRuntimeImage(engine: ContainerEngine): Promise<RuntimeImage> {
  const log = (line: string) => process.stderr.write(`[runtime image] ${line}\n`);
  const baseRef = await ensureBaseImage({ engine, baseImage: OFFLINE_BASE, log });
  return ensureRuntimeImage({ engine, baseRef, projectRoot, log });
}
