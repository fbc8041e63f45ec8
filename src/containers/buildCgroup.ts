/**
 * A pids limit for one image build. The Engine API's build endpoint takes a memory limit but no pids limit (podman
 * 4.3 and Docker alike), and RLIMIT_NPROC does not hold a step running as root (root of a rootful engine is the
 * host's root, which the kernel exempts), so a fork bomb in a RUN step would fill the host's process table.
 * Each build's steps are therefore created under a cgroup of their own whose `pids.max` graphx writes first: the
 * runtime creates a step's cgroup beneath it and removes only that, so the limit holds for every step of the build
 * and for all their processes together.
 * This needs a cgroupfs the worker may write and an engine on this host using it by path (the cgroupfs manager:
 * graphx's own podman, engineConfig.ts). Where it cannot, the build runs without the pids limit and its log says so.
 */
import fs from 'node:fs';
import path from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** Parent of every build's cgroup, in each hierarchy. */
const BUILDS = 'graphx-builds';

export interface BuildCgroup {
  /** The `cgroupparent` to build with (a cgroupfs path), or null when no limit could be set. */
  cgroupParent: string | null;
  /** Why there is no limit (for the build log), when there is none. */
  unavailable: string | null;
  /** Removes the build's cgroup directories (the steps' own are gone with their containers). */
  release: () => void;
}

/** Creates the cgroup of build `buildId` with at most `pidsLimit` processes and threads. */
export function createBuildCgroup(buildId: string, pidsLimit: number, root = CGROUP_ROOT): BuildCgroup {
  const relative = path.posix.join(BUILDS, buildId);
  const release = () => {
    for (const dir of hierarchyDirs(root)) {
      for (const leaf of [path.join(dir, relative, 'steps'), path.join(dir, relative)]) {
        try {
          fs.rmdirSync(leaf);
        } catch {
          // Missing (never created in this hierarchy) or still busy: nothing of ours to keep.
        }
      }
    }
  };
  try {
    const unified = fs.existsSync(path.join(root, 'cgroup.controllers'));
    if (unified) {
      // cgroup v2: each level must hand the pids and memory controllers down to the next.
      enableControllers(root);
      fs.mkdirSync(path.join(root, BUILDS), { recursive: true });
      enableControllers(path.join(root, BUILDS));
      fs.mkdirSync(path.join(root, relative), { recursive: true });
      fs.writeFileSync(path.join(root, relative, 'pids.max'), String(pidsLimit));
      enableControllers(path.join(root, relative));
    } else {
      const pids = path.join(root, 'pids');
      fs.mkdirSync(path.join(pids, relative), { recursive: true });
      fs.writeFileSync(path.join(pids, relative, 'pids.max'), String(pidsLimit));
    }
    return { cgroupParent: `/${relative}/steps`, unavailable: null, release };
  } catch (error) {
    release();
    return { cgroupParent: null, unavailable: (error as Error).message, release: () => {} };
  }
}

/** The directories a build's cgroup may exist in: the unified root, or every v1 hierarchy. */
function hierarchyDirs(root: string): string[] {
  if (fs.existsSync(path.join(root, 'cgroup.controllers'))) return [root];
  try {
    return fs.readdirSync(root).map((name) => path.join(root, name));
  } catch {
    return [];
  }
}

function enableControllers(dir: string): void {
  const controllers = fs.readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/);
  const wanted = ['pids', 'memory'].filter((name) => controllers.includes(name));
  if (!wanted.includes('pids')) throw new Error(`the pids controller is not available in ${dir}`);
  fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), wanted.map((name) => `+${name}`).join(' '));
}
