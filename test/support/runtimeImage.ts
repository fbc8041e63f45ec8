/** The runtime image the container tests build on: built once per content change, on the offline base. */
import { projectRoot } from '../../src/config';
import { ensureBaseImage, OFFLINE_BASE } from '../../src/containers/baseImage';
import type { ContainerEngine } from '../../src/containers/engine';
import { ensureRuntimeImage, type RuntimeImage } from '../../src/containers/runtimeImage';

/**
 * The time a hook that may build the base and runtime images is given. A machine's first run builds Debian with
 * mmdebstrap and installs the runtime's packages (minutes on two shared cores); jest's default hook timeout would
 * fail the hook while the build goes on, and a stack started after it would outlive the test file.
 */
export const IMAGE_BUILD_HOOK_MS = 20 * 60_000;

/** Builds or finds the base and runtime images (the first run on a machine takes a few minutes). */
export async function ensureTestRuntimeImage(engine: ContainerEngine, nodeMajor?: number): Promise<RuntimeImage> {
  const log = (line: string) => process.stderr.write(`[runtime image] ${line}\n`);
  const baseRef = await ensureBaseImage({ engine, baseImage: OFFLINE_BASE, log, nodeMajor });
  return ensureRuntimeImage({ engine, baseRef, projectRoot, log });
}
