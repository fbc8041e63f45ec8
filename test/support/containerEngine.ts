/**
 * The tests' container engine: one podman API service per test run on a store shared by all runs on this machine
 * (under the OS temp dir), so images built once (the runtime image, the busybox image) are reused by later runs.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DockerEngine } from '../../src/containers/dockerEngine';
import { writeEngineConfig, type EngineConfigFiles } from '../../src/containers/engineConfig';
import { ensurePodmanService, type PodmanService } from '../../src/containers/podmanService';

export const TEST_ENGINE_DIR = path.join(os.tmpdir(), 'graphx-test-engine');

/** True when podman is installed. CI installs it (.ci/run), so there a missing podman fails instead of skipping. */
export function podmanAvailable(): boolean {
  try {
    execFileSync('podman', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI) throw new Error('podman is missing in CI: scripts/install-container-tools.sh should install it');
    return false;
  }
}

/** `describe` when podman is installed, else a skipped block that says why. */
export function describeWithEngine(name: string, fn: () => void): void {
  if (podmanAvailable()) describe(name, fn);
  else describe.skip(`${name} (skipped: podman is not installed)`, fn);
}

export interface TestEngine {
  engine: DockerEngine;
  files: EngineConfigFiles;
  service: PodmanService;
}

/** Starts (or reuses) the shared test engine. */
export async function startTestEngine(): Promise<TestEngine> {
  const files = writeEngineConfig({ dir: path.join(TEST_ENGINE_DIR, 'engine'), storeDir: path.join(TEST_ENGINE_DIR, 'store') });
  const service = await ensurePodmanService(files);
  return { engine: new DockerEngine(service.socketPath, files.ulimits), files, service };
}

export const BUSYBOX_IMAGE = 'localhost/graphx-test-busybox:1';

/**
 * A one-file image: the static busybox from the host's busybox-static package, an /etc/passwd with an unprivileged
 * user 10001, and an empty /tmp. Imported once per store.
 */
export async function ensureBusyboxImage(engine: DockerEngine): Promise<string> {
  if (await engine.inspectImage(BUSYBOX_IMAGE)) return BUSYBOX_IMAGE;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-busybox-'));
  try {
    const rootfs = path.join(root, 'rootfs');
    for (const dir of ['bin', 'etc', 'tmp', 'app']) fs.mkdirSync(path.join(rootfs, dir), { recursive: true });
    fs.copyFileSync('/bin/busybox', path.join(rootfs, 'bin', 'busybox'));
    fs.chmodSync(path.join(rootfs, 'bin', 'busybox'), 0o755);
    for (const tool of ['sh', 'cat', 'id', 'ls', 'head', 'tail', 'sleep', 'echo', 'touch', 'nc', 'httpd', 'grep', 'wc']) {
      fs.symlinkSync('busybox', path.join(rootfs, 'bin', tool));
    }
    fs.writeFileSync(path.join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\napp:x:10001:10001::/app:/bin/sh\n');
    fs.writeFileSync(path.join(rootfs, 'etc', 'group'), 'root:x:0:\napp:x:10001:\n');
    fs.chmodSync(path.join(rootfs, 'tmp'), 0o1777);
    const tarPath = path.join(root, 'rootfs.tar');
    execFileSync('tar', ['-C', rootfs, '-cf', tarPath, '.']);
    await engine.importImage(tarPath, BUSYBOX_IMAGE, ['ENV PATH=/bin', 'CMD ["/bin/sh"]']);
    return BUSYBOX_IMAGE;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
