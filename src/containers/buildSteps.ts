/**
 * Stopping an image build that was given up on. Docker Engine stops a build when its client hangs up; podman 4's API
 * service does not: the step runs on (a `sleep` for hours) and holds its working container. So a cancelled revision
 * build also ends the running step itself: the engine's RUN processes of this build are found by the build id written
 * into the build's own env file (bind-mounted for that step, never in a layer, not part of the cache key) and killed.
 * This needs the engine on this host and the right to read those processes (rootful podman, or the same user); when
 * it cannot, nothing is killed and the step ends at its own pace.
 */
import fs from 'node:fs';
import { cpuOf, statFields } from '@graphx/kit/os/processes';

/** The env file line that names a build. */
export function buildIdLine(buildId: string): string {
  return `export GRAPHX_BUILD_ID='${buildId}'\n`;
}

/**
 * SIGKILLs the running steps of the build `buildId` (or, with `prefix`, of every build whose id starts with it: the
 * earlier attempts of a revision whose worker died): the processes whose command reads `envFileInContainer` and whose
 * root holds that file with such an id. The step's shell is the first process of its container, so its children end
 * with it. Returns how many were killed.
 */
export function killBuildSteps(buildId: string, envFileInContainer: string, prefix = false): number {
  const wanted = prefix ? buildIdLine(buildId).replace(/'\n$/, '') : buildIdLine(buildId);
  let killed = 0;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes(envFileInContainer)) continue;
      const envFile = fs.readFileSync(`/proc/${pid}/root${envFileInContainer}`, 'utf8');
      if (!envFile.includes(wanted)) continue;
      process.kill(Number(pid), 'SIGKILL');
      killed += 1;
    } catch {
      // Gone meanwhile, or not ours to read: skip it.
    }
  }
  return killed;
}

/**
 * CPU time (clock ticks) used so far by the running steps of build `buildId`: every process whose root holds the
 * build's env file with its id (the step's shell and all it started, in the step's mount namespace). Null when no
 * process can be seen at all (no /proc); 0 between steps.
 */
export function buildStepCpuTicks(buildId: string, envFileInContainer: string): number | null {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const wanted = buildIdLine(buildId);
  let ticks = 0;
  for (const pid of pids) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/root${envFileInContainer}`, 'utf8').includes(wanted)) continue;
    } catch {
      continue;
    }
    const fields = statFields(pid);
    if (fields) ticks += cpuOf(fields);
  }
  return ticks;
}
